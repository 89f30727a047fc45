#include "serve/batcher.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

namespace hexir::serve {
namespace {

// A model of one input [rows, 3] f32 and one output [rows, 2] f32: out = (sum of the row, row's
// first value x 2), so a row that lands in another request's place shows.
std::vector<TensorInfo> Inputs() { return {{"x", ElementType::kF32, {1, 3}, 12}}; }
std::vector<TensorInfo> Outputs() { return {{"y", ElementType::kF32, {1, 2}, 8}}; }

std::vector<unsigned char> Rows(const std::vector<float>& values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

struct FakeModel {
  std::atomic<int> runs{0}, most_rows{0}, calls_in_flight{0}, overlapped{0};
  int delay_us = 200;

  Status Run(Span<const TensorView> in, Span<const MutableTensorView> out) {
    if (calls_in_flight.fetch_add(1) > 0) overlapped.fetch_add(1);
    int64_t rows = in[0].shape[0];
    runs.fetch_add(1);
    int most = most_rows.load();
    while (rows > most && !most_rows.compare_exchange_weak(most, static_cast<int>(rows))) {
    }
    const float* x = static_cast<const float*>(in[0].data);
    float* y = static_cast<float*>(out[0].data);
    if (out[0].shape[0] != rows) return InvalidArgumentError("output rows");
    for (int64_t r = 0; r < rows; ++r) {
      y[2 * r] = x[3 * r] + x[3 * r + 1] + x[3 * r + 2];
      y[2 * r + 1] = 2 * x[3 * r];
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    calls_in_flight.fetch_sub(1);
    return Status::Ok();
  }
};

}  // namespace

TEST_CASE("concurrent requests are batched and each gets its own rows", "[batcher]") {
  FakeModel model;
  Metrics::Model stats;
  BatchOptions options;
  options.max_batch = 8;
  options.delay_us = 2000;
  auto run = [&model](Span<const TensorView> in, Span<const MutableTensorView> out, const RunOptions&) {
    return model.Run(in, out);
  };
  std::atomic<int> wrong{0}, failed{0}, requests{0}, rows_sent{0};
  {
    Batcher batcher({run, run}, Inputs(), Outputs(), options, &stats);
    std::vector<std::thread> clients;
    for (int c = 0; c < 12; ++c)
      clients.emplace_back([&, c] {
        std::mt19937 rng(c);
        for (int n = 0; n < 40; ++n) {
          int rows = 1 + static_cast<int>(rng() % 3);
          std::vector<float> x;
          for (int i = 0; i < rows * 3; ++i) x.push_back(static_cast<float>(c * 1000 + n * 10 + i));
          std::vector<std::vector<unsigned char>> inputs{Rows(x)}, outputs;
          Status s = batcher.Run(rows, inputs, &outputs);
          requests.fetch_add(1);
          rows_sent.fetch_add(rows);
          if (!s.ok() || outputs.size() != 1 || outputs[0].size() != static_cast<size_t>(rows) * 8) {
            failed.fetch_add(1);
            continue;
          }
          const float* y = reinterpret_cast<const float*>(outputs[0].data());
          for (int r = 0; r < rows; ++r)
            if (y[2 * r] != x[3 * r] + x[3 * r + 1] + x[3 * r + 2] || y[2 * r + 1] != 2 * x[3 * r]) wrong.fetch_add(1);
        }
      });
    for (std::thread& t : clients) t.join();
  }
  CHECK(failed == 0);
  CHECK(wrong == 0);
  CHECK(model.most_rows <= 8);
  CHECK(model.runs < requests);  // requests shared runs
  CHECK(model.overlapped > 0);   // both runners worked at once
  CHECK(stats.batched_requests == static_cast<uint64_t>(requests));
  CHECK(stats.batch_rows == static_cast<uint64_t>(rows_sent));
  uint64_t batches = 0;
  for (const auto& b : stats.batch_size) batches += b;
  CHECK(batches == static_cast<uint64_t>(model.runs));
}

TEST_CASE("a lone request waits at most the delay, and a full batch does not wait", "[batcher]") {
  FakeModel model;
  model.delay_us = 0;
  BatchOptions options;
  options.max_batch = 4;
  options.delay_us = 50000;
  auto run = [&model](Span<const TensorView> in, Span<const MutableTensorView> out, const RunOptions&) {
    return model.Run(in, out);
  };
  Batcher batcher({run}, Inputs(), Outputs(), options, nullptr);
  std::vector<std::vector<unsigned char>> outputs;
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(batcher.Run(1, {Rows({1, 2, 3})}, &outputs).ok());
  double lone = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(lone >= 0.045);
  CHECK(lone < 1.0);
  t0 = std::chrono::steady_clock::now();
  REQUIRE(batcher.Run(4, {Rows({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}, &outputs).ok());
  double full = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(full < 0.04);
  const float* y = reinterpret_cast<const float*>(outputs[0].data());
  CHECK(y[6] == 10 + 11 + 12);
}

TEST_CASE("a request of no rows or too many is refused, and a failed run fails its requests", "[batcher]") {
  BatchOptions options;
  options.max_batch = 4;
  options.delay_us = 0;
  auto failing = [](Span<const TensorView>, Span<const MutableTensorView>, const RunOptions&) {
    return InternalError("kernel fault");
  };
  Batcher batcher({failing}, Inputs(), Outputs(), options, nullptr);
  std::vector<std::vector<unsigned char>> outputs;
  CHECK(batcher.Run(0, {Rows({})}, &outputs).code() == StatusCode::kInvalidArgument);
  CHECK(batcher.Run(5, {Rows(std::vector<float>(15, 1.0f))}, &outputs).code() == StatusCode::kInvalidArgument);
  Status s = batcher.Run(2, {Rows({1, 2, 3, 4, 5, 6})}, &outputs);
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message() == "kernel fault");
}

TEST_CASE("a waiting request leaves at its deadline or when cancelled, and a batch runs to its last deadline",
          "[batcher]") {
  using Clock = std::chrono::steady_clock;
  BatchOptions options;
  options.max_batch = 1;  // one request per batch: the second waits for the first
  options.delay_us = 0;
  std::atomic<bool> release{false}, started{false};
  std::optional<Clock::time_point> seen_deadline;  // written before `started`, read after it
  uint64_t seen_cap = 0;
  auto slow = [&](Span<const TensorView>, Span<const MutableTensorView>, const RunOptions& control) {
    seen_deadline = control.deadline;
    seen_cap = control.max_loop_trips;
    started.store(true);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  };
  Batcher batcher({slow}, Inputs(), Outputs(), options, nullptr);
  RunOptions first;
  first.deadline = Clock::now() + std::chrono::seconds(30);
  first.max_loop_trips = 7;
  std::thread holder([&] {
    std::vector<std::vector<unsigned char>> outputs;
    CHECK(batcher.Run(1, {Rows({1, 2, 3})}, &outputs, first).ok());
  });
  while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(seen_deadline.has_value());
  CHECK(*seen_deadline == *first.deadline);
  CHECK(seen_cap == 7);

  RunOptions soon;
  soon.deadline = Clock::now() + std::chrono::milliseconds(50);
  std::vector<std::vector<unsigned char>> outputs;
  Clock::time_point start = Clock::now();
  Status late = batcher.Run(1, {Rows({1, 2, 3})}, &outputs, soon);
  CHECK(late.code() == StatusCode::kDeadlineExceeded);
  CHECK(Clock::now() - start < std::chrono::seconds(5));

  std::atomic<bool> gone{true};
  RunOptions cancelled;
  cancelled.cancel = &gone;
  CHECK(batcher.Run(1, {Rows({1, 2, 3})}, &outputs, cancelled).code() == StatusCode::kCancelled);
  CHECK(batcher.waiting() == 0);
  release = true;
  holder.join();
}

}  // namespace hexir::serve

// Many sessions over one module from several threads give the bits of a single-threaded run.
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "hexir/hexir.h"
#include "vm/test_executable.h"

namespace hexir {
namespace {

// Runs `runs` requests with inputs derived from (seed, run) and returns every output (empty
// if a run fails). No Catch2 assertions here: it runs on worker threads, and Catch2's
// assertion machinery is not thread-safe.
std::vector<float> Serve(Session& session, int seed, int runs) {
  std::vector<float> all;
  alignas(64) float x[8], y[8], t[8];
  int64_t xs[] = {2, 4}, ts[] = {8};
  TensorView in{x, ElementType::kF32, Span<const int64_t>(xs, 2)};
  MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(xs, 2)},
                              {t, ElementType::kF32, Span<const int64_t>(ts, 1)}};
  for (int r = 0; r < runs; ++r) {
    for (int i = 0; i < 8; ++i) x[i] = static_cast<float>((seed * 31 + r * 7 + i * 3) % 17) - 8.0f;
    if (!session.Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).ok()) return {};
    all.insert(all.end(), y, y + 8);
    all.insert(all.end(), t, t + 8);
  }
  return all;
}

TEST_CASE("8 sessions over 2 threads are bit-identical to one thread", "[vm]") {
  std::string path = testing::WriteTestExecutable(HEXIR_TEST_KERNELS_PATH, "concurrency");
  RuntimeOptions options;
  options.threads = 2;
  auto runtime = Runtime::Create(options);
  REQUIRE(runtime.ok());
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  const int kSessions = 8, kRuns = 1000;
  std::vector<std::vector<float>> reference(kSessions), results(kSessions);
  {
    auto one = Session::Create(*module);
    REQUIRE(one.ok());
    for (int s = 0; s < kSessions; ++s) reference[s] = Serve(**one, s, kRuns);
  }
  std::vector<std::unique_ptr<Session>> sessions;
  for (int s = 0; s < kSessions; ++s) {
    auto session = Session::Create(*module);
    REQUIRE(session.ok());
    sessions.push_back(std::move(*session));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int s = t; s < kSessions; s += 2) results[s] = Serve(*sessions[s], s, kRuns);
    });
  for (auto& th : threads) th.join();
  for (int s = 0; s < kSessions; ++s) {
    REQUIRE(!reference[s].empty());
    REQUIRE(results[s].size() == reference[s].size());
    CHECK(std::memcmp(results[s].data(), reference[s].data(), results[s].size() * sizeof(float)) == 0);
  }
  sessions.clear();
  module->reset();
  CHECK((*runtime)->live_buffers() == 0);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hexir

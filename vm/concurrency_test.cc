// Many sessions over one module from several threads give the bits of a single-threaded run.
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>

#include "hexir/hexir.h"
#include <unistd.h>

#include <cstdio>

#include "base/file_mapping.h"
#include "serializer/writer.h"
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

TEST_CASE("a second thread's Run on a busy session is refused at once, the first completes", "[vm]") {
  // One dispatch of test_gate: input 0 -> output 0, 8 int32 each.
  serializer::ExecutableSpec spec = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  spec.libraries[0].entries = {{"test_gate", 2, 1, 0, {32, 32}}};
  serializer::Function& fn = spec.functions[0];
  fn.inputs = {{"x", serializer::fb::ElementType::I32, {8}}};
  fn.outputs = {{"y", serializer::fb::ElementType::I32, {8}}};
  fn.commands.clear();
  serializer::DispatchCommand gate;
  gate.bindings = {{serializer::SlotKind::Input, 0, 0, 32}, {serializer::SlotKind::Output, 0, 0, 32}};
  gate.num_inputs = 1;
  gate.aliases = {-1};
  fn.commands.push_back(serializer::AllocCommand{0});
  fn.commands.push_back(gate);
  fn.arenas = {{0, 0, 64}};
  std::vector<uint8_t> bytes = serializer::WriteExecutable(spec);
  std::string path = "/tmp/hexir_vm_test_gate." + std::to_string(::getpid()) + ".hxb";
  REQUIRE(WriteFileAtomically(path, bytes.data(), bytes.size()).ok());
  auto runtime = Runtime::Create(RuntimeOptions{});
  REQUIRE(runtime.ok());
  auto module = Module::Load(**runtime, path);
  std::remove(path.c_str());
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  alignas(64) int32_t x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8] = {}, z[8] = {};
  int64_t shape[] = {8};
  TensorView in{x, ElementType::kI32, Span<const int64_t>(shape, 1)};
  MutableTensorView out{y, ElementType::kI32, Span<const int64_t>(shape, 1)};
  MutableTensorView other{z, ElementType::kI32, Span<const int64_t>(shape, 1)};
  Status first;
  std::thread holder([&] { first = (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(&out, 1)); });
  while (__atomic_load_n(&y[1], __ATOMIC_ACQUIRE) == 0) {
  }
  // The first run is inside its kernel: a second one must not touch the arena or the outputs.
  // (Its own input is open: without the guard it would run to completion beside the first.)
  alignas(64) int32_t open[8] = {5, 5, 5, 5, 5, 5, 5, 5};
  TensorView open_in{open, ElementType::kI32, Span<const int64_t>(shape, 1)};
  Status second = (*session)->Run(Span<const TensorView>(&open_in, 1), Span<const MutableTensorView>(&other, 1));
  __atomic_store_n(&x[0], 9, __ATOMIC_RELEASE);
  holder.join();
  CHECK(second.code() == StatusCode::kFailedPrecondition);
  CHECK(second.message().find("another thread runs the same session") != std::string::npos);
  CHECK(z[0] == 0);
  CHECK(first.ok());
  CHECK(y[0] == 9);
  CHECK(y[7] == 7);
  // Free again: a later run succeeds.
  CHECK((*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(&other, 1)).ok());
  CHECK(z[0] == 9);
}

}  // namespace
}  // namespace hexir

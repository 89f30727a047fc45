// Module and Session over executables written by the serializer with hand-written kernels
// (hal/host/test_kernels.c), so the VM is tested without the compiler.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <unistd.h>

#include "base/file_mapping.h"
#include "hexir/hexir.h"
#include "serializer/writer.h"
#include "vm/test_executable.h"

namespace hexir {
namespace {
std::string WriteTestExecutable(const std::string& tag) {
  return testing::WriteTestExecutable(HEXIR_TEST_KERNELS_PATH, tag);
}

// The test executable's input x (2x4) and outputs y (2x4) and t (8).
struct TestIo {
  float x[8] = {0, 1, 2, 3, -4, 5, 0.5f, 1.5f};
  float y[8] = {}, t[8] = {};
  int64_t xs[2] = {2, 4}, ts[1] = {8};
  Status Run(Session& session) {
    TensorView in{x, ElementType::kF32, Span<const int64_t>(xs, 2)};
    MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(xs, 2)},
                                {t, ElementType::kF32, Span<const int64_t>(ts, 1)}};
    return session.Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  }
};

TEST_CASE("a module runs in sessions and gives the expected outputs", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("run");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  CHECK((*session)->arena_bytes() == 64);

  TestIo io;
  for (int run = 0; run < 3; ++run) {
    REQUIRE(io.Run(**session).ok());
    for (int i = 0; i < 8; ++i) {
      CHECK(io.t[i] == io.x[i] - 1.0f);
      CHECK(io.y[i] == std::max(io.x[i] - 1.0f, 0.0f) + 2.0f + 3.0f);
    }
  }
  // The host has no clock of its own: a session asked to time its runs has no device time.
  CHECK(!(*session)->last_device_ms().has_value());
  SessionOptions timed;
  timed.time_device = true;
  auto timed_session = Session::Create(*module, timed);
  REQUIRE(timed_session.ok());
  REQUIRE(io.Run(**timed_session).ok());
  CHECK(!(*timed_session)->last_device_ms().has_value());
  timed_session->reset();
  // Arena, staging and filled constants are device buffers, all returned at destruction.
  CHECK((*runtime)->live_buffers() == 3);
  session->reset();
  CHECK((*runtime)->live_buffers() == 1);
  module->reset();
  CHECK((*runtime)->live_buffers() == 0);
  CHECK((*runtime)->live_bytes() == 0);
  std::remove(path.c_str());
}

// A constant stored as f16 bits (serializer ConstantWidening) is widened into the FilledConstant
// space at load: the test executable with its -1 constant narrow computes the same outputs.
TEST_CASE("constants stored as f16 or bf16 are widened at load", "[vm]") {
  for (uint8_t format : {0, 1}) {
    serializer::ExecutableSpec spec = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
    uint16_t minus_one = format == 0 ? 0xBC00 : 0xBF80;  // -1 in f16, in bf16
    spec.narrow_constants.assign(16, 0);
    for (int i = 0; i < 8; ++i) {
      spec.narrow_constants[2 * i] = static_cast<uint8_t>(minus_one);
      spec.narrow_constants[2 * i + 1] = static_cast<uint8_t>(minus_one >> 8);
    }
    spec.filled_constants_bytes = 96;
    spec.constant_widenings = {{0, 64, 8, format}};
    auto& add = std::get<serializer::DispatchCommand>(spec.functions[0].commands[1]);
    REQUIRE(add.bindings[1].kind == serializer::SlotKind::Constant);
    add.bindings[1] = {serializer::SlotKind::FilledConstant, 0, 64, 32};
    std::string path = testing::WriteSpec(spec, "narrow");
    auto runtime = Runtime::Create({});
    REQUIRE(runtime.ok());
    auto module = Module::Load(**runtime, path);
    REQUIRE(module.ok());
    auto session = Session::Create(*module);
    REQUIRE(session.ok());
    TestIo io;
    REQUIRE(io.Run(**session).ok());
    for (int i = 0; i < 8; ++i) {
      CHECK(io.t[i] == io.x[i] - 1.0f);
      CHECK(io.y[i] == std::max(io.x[i] - 1.0f, 0.0f) + 2.0f + 3.0f);
    }
    std::remove(path.c_str());
  }
}

// SessionOptions::poison: a correct function computes the same; one whose kernel reads an arena
// slot nothing wrote computes NaNs.
TEST_CASE("a poisoned session exposes a read before a write", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  SessionOptions poisoned;
  poisoned.poison = true;
  std::string path = WriteTestExecutable("poison");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto session = Session::Create(*module, poisoned);
  REQUIRE(session.ok());
  TestIo io;
  REQUIRE(io.Run(**session).ok());
  for (int i = 0; i < 8; ++i) CHECK(io.y[i] == std::max(io.x[i] - 1.0f, 0.0f) + 2.0f + 3.0f);
  std::remove(path.c_str());

  serializer::ExecutableSpec spec = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  // Without the FILL of arena [32, 64), the accumulation reads it before anything wrote it.
  auto& commands = spec.functions[0].commands;
  REQUIRE(std::holds_alternative<serializer::FillCommand>(commands[3]));
  commands.erase(commands.begin() + 3);
  std::vector<uint8_t> bytes = serializer::WriteExecutable(spec);
  path = "/tmp/hexir_vm_test_unwritten." + std::to_string(::getpid()) + ".hxb";
  REQUIRE(WriteFileAtomically(path, bytes.data(), bytes.size()).ok());
  auto broken = Module::Load(**runtime, path);
  REQUIRE(broken.ok());
  auto broken_session = Session::Create(*broken, poisoned);
  REQUIRE(broken_session.ok());
  REQUIRE(io.Run(**broken_session).ok());
  for (int i = 0; i < 8; ++i) CHECK(std::isnan(io.y[i]));
  std::remove(path.c_str());
}

// A profiling session times each of its function's commands over its runs and still computes
// the same outputs; a session made without it has no profile.
TEST_CASE("a profiling session times every command", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("profile");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto plain = Session::Create(*module);
  REQUIRE(plain.ok());
  TestIo io;
  REQUIRE(io.Run(**plain).ok());
  CHECK((*plain)->profile().empty());
  SessionOptions options;
  options.profile = true;
  auto session = Session::Create(*module, options);
  REQUIRE(session.ok());
  for (int run = 0; run < 2; ++run) REQUIRE(io.Run(**session).ok());
  for (int i = 0; i < 8; ++i) CHECK(io.y[i] == std::max(io.x[i] - 1.0f, 0.0f) + 2.0f + 3.0f);
  std::vector<CommandProfile> profile = (*session)->profile();
  // alloc, add, relu, fill, accumulate (add again), add.
  const char* kinds[] = {"alloc", "dispatch", "dispatch", "fill", "dispatch", "dispatch"};
  const char* names[] = {"", "test_add8", "test_relu8", "", "test_add8", "test_add8"};
  REQUIRE(profile.size() == 6);
  for (uint32_t i = 0; i < 6; ++i) {
    CHECK(profile[i].index == i);
    CHECK(profile[i].kind == kinds[i]);
    CHECK(profile[i].name == names[i]);
    CHECK(profile[i].workgroups == (profile[i].kind == "dispatch" ? 1u : 0u));
    CHECK(profile[i].runs == 2);
    CHECK(profile[i].total_ms >= 0.0);
  }
  session->reset();
  plain->reset();
  module->reset();
  std::remove(path.c_str());
}

// With LoadMode::kCopy a Module holds a private copy of its file: overwriting the file in place
// with another executable of the same size (weights +5 instead of -1) and then truncating it
// changes nothing in the running model. (With the default mapping the first would change its
// weights and the second make the next run die with SIGBUS.)
TEST_CASE("a module loaded as a copy is immune to changes of its file", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("copy");
  ModuleOptions options;
  options.load_mode = LoadMode::kCopy;
  auto module = Module::Load(**runtime, path, options);
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  TestIo io;
  auto check = [&] {
    REQUIRE(io.Run(**session).ok());
    for (int i = 0; i < 8; ++i) CHECK(io.t[i] == io.x[i] - 1.0f);
  };
  check();
  // Another executable of the same size, written over the file in place (as `cp` does).
  serializer::ExecutableSpec other = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  float five[8];
  for (float& v : five) v = 5.0f;
  std::memcpy(other.constants.data(), five, sizeof(five));
  std::vector<uint8_t> bytes = serializer::WriteExecutable(other);
  auto original = ReadFileToString(path);
  REQUIRE(original.ok());
  REQUIRE(bytes.size() == original->size());
  FILE* f = std::fopen(path.c_str(), "r+b");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  check();
  REQUIRE(::truncate(path.c_str(), 0) == 0);
  check();
  // A fresh load sees the file as it is now.
  CHECK(Module::Load(**runtime, path, options).status().code() == StatusCode::kDataLoss);
  std::remove(path.c_str());
}

TEST_CASE("bad bindings are refused with expected and actual", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("bind");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  float x[8], y[8], t[8];
  int64_t wrong[] = {4, 2}, ys[] = {2, 4}, ts[] = {8};
  TensorView in{x, ElementType::kF32, Span<const int64_t>(wrong, 2)};
  MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(ys, 2)},
                              {t, ElementType::kF32, Span<const int64_t>(ts, 1)}};
  Status s = (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "input 0 'x' expects 2x4 f32, got 4x2 f32");
  in.shape = Span<const int64_t>(ys, 2);
  in.element_type = ElementType::kI32;
  s = (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  CHECK(s.message() == "input 0 'x' expects 2x4 f32, got 2x4 i32");
  s = (*session)->Run(Span<const TensorView>(), Span<const MutableTensorView>(outs, 2));
  CHECK(s.message() == "function 'main' takes 1 inputs, got 0");
  CHECK(Session::Create(*module, "other").status().message() ==
        "no function 'other' in the module (it has: main)");
  std::remove(path.c_str());
}

TEST_CASE("device memory the caller holds is bound in place", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("device-memory");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  // On the host device, device memory is process memory: the same results, read and written
  // where they are.
  TestIo host, device;
  REQUIRE(host.Run(**session).ok());
  TensorView in{device.x, ElementType::kF32, Span<const int64_t>(device.xs, 2), MemoryLocation::kDevice};
  MutableTensorView outs[] = {{device.y, ElementType::kF32, Span<const int64_t>(device.xs, 2), MemoryLocation::kDevice},
                              {device.t, ElementType::kF32, Span<const int64_t>(device.ts, 1), MemoryLocation::kHost}};
  REQUIRE((*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).ok());
  CHECK(std::memcmp(host.y, device.y, sizeof(host.y)) == 0);
  CHECK(std::memcmp(host.t, device.t, sizeof(host.t)) == 0);
  // Device memory is not staged, so it must be aligned to its elements.
  alignas(8) unsigned char raw[8 * sizeof(float) + 1];
  in.data = raw + 1;
  Status s = (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "input 0 'x' is device memory at an address not aligned to its 4-byte elements; kernels "
                       "read device memory in place");
  // Overlap is refused whatever the views' locations (on the host they are the same memory).
  in.data = device.x;
  outs[1].data = device.x;
  s = (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("output 1 't' overlaps input 0 'x'") != std::string::npos);
  std::remove(path.c_str());
}

// SessionOptions::graphs on the host (the device replays the recording): the same outputs;
// other caller buffers update the recorded commands in place; a staged input (a copy that was
// not there) records the run again.
TEST_CASE("a session runs through a graph and follows the caller's buffers", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("graph");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto plain = Session::Create(*module);
  REQUIRE(plain.ok());
  CHECK(!(*plain)->graph_stats().enabled);  // the host gains nothing from graphs by default
  SessionOptions options;
  options.graphs = SessionOptions::Graphs::kOn;
  auto session = Session::Create(*module, options);
  REQUIRE(session.ok());
  CHECK((*session)->graph_stats().enabled);

  TestIo want, a, b;
  for (int i = 0; i < 8; ++i) b.x[i] = a.x[i] * -3.0f + 0.25f;
  TestIo want_b = b;
  REQUIRE(want.Run(**plain).ok());
  REQUIRE(want_b.Run(**plain).ok());
  for (int run = 0; run < 2; ++run) {
    std::memset(a.y, 0, sizeof(a.y));
    std::memset(b.t, 0, sizeof(b.t));
    REQUIRE(a.Run(**session).ok());
    CHECK(std::memcmp(a.y, want.y, sizeof(a.y)) == 0);
    CHECK(std::memcmp(a.t, want.t, sizeof(a.t)) == 0);
    REQUIRE(b.Run(**session).ok());
    CHECK(std::memcmp(b.y, want_b.y, sizeof(b.y)) == 0);
    CHECK(std::memcmp(b.t, want_b.t, sizeof(b.t)) == 0);
  }
  GraphStats stats = (*session)->graph_stats();
  CHECK(stats.instantiations == 1);
  CHECK(stats.launches == 4);
  // Three runs switched buffers; each updated the commands that touch x, y or t.
  CHECK(stats.node_updates > 0);
  CHECK(stats.node_updates % 3 == 0);
  // An input at an odd address is staged: a copy enters the run, which is recorded again.
  alignas(8) unsigned char raw[8 * sizeof(float) + 1];
  std::memcpy(raw + 1, a.x, sizeof(a.x));
  TestIo odd;
  TensorView in{raw + 1, ElementType::kF32, Span<const int64_t>(odd.xs, 2)};
  MutableTensorView outs[] = {{odd.y, ElementType::kF32, Span<const int64_t>(odd.xs, 2)},
                              {odd.t, ElementType::kF32, Span<const int64_t>(odd.ts, 1)}};
  REQUIRE((*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).ok());
  CHECK(std::memcmp(odd.y, want.y, sizeof(odd.y)) == 0);
  CHECK(std::memcmp(odd.t, want.t, sizeof(odd.t)) == 0);
  CHECK((*session)->graph_stats().instantiations == 2);
  // A profiling session times each command: no graph.
  options.profile = true;
  auto profiled = Session::Create(*module, options);
  REQUIRE(profiled.ok());
  CHECK(!(*profiled)->graph_stats().enabled);
  std::remove(path.c_str());
}

// hexir::DeviceBuffer: the caller's device memory, copied to and from, bound in place; its
// bytes count as the runtime's until it goes.
TEST_CASE("device buffers hold a run's inputs and outputs", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("device-buffer");
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto session = Session::Create(*module);
  REQUIRE(session.ok());
  TestIo want;
  REQUIRE(want.Run(**session).ok());
  uint64_t before = (*runtime)->live_buffers();
  auto x = DeviceBuffer::Allocate(**runtime, sizeof(want.x));
  auto y = DeviceBuffer::Allocate(**runtime, sizeof(want.y));
  auto t = DeviceBuffer::Allocate(**runtime, sizeof(want.t));
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(t.ok());
  CHECK((*runtime)->live_buffers() == before + 3);
  CHECK((*x)->size() == sizeof(want.x));
  CHECK(reinterpret_cast<uintptr_t>((*x)->data()) % 256 == 0);
  REQUIRE((*x)->CopyFromHost(want.x, sizeof(want.x)).ok());
  TensorView in{(*x)->data(), ElementType::kF32, Span<const int64_t>(want.xs, 2), MemoryLocation::kDevice};
  MutableTensorView outs[] = {{(*y)->data(), ElementType::kF32, Span<const int64_t>(want.xs, 2), MemoryLocation::kDevice},
                              {(*t)->data(), ElementType::kF32, Span<const int64_t>(want.ts, 1), MemoryLocation::kDevice}};
  REQUIRE((*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).ok());
  float got_y[8] = {}, got_t[8] = {};
  REQUIRE((*y)->CopyToHost(got_y, sizeof(got_y)).ok());
  REQUIRE((*t)->CopyToHost(got_t, 4 * sizeof(float), 4 * sizeof(float)).ok());  // the second half
  CHECK(std::memcmp(got_y, want.y, sizeof(got_y)) == 0);
  CHECK(std::memcmp(got_t, want.t + 4, 4 * sizeof(float)) == 0);
  // Ranges outside the buffer are refused, also where offset + bytes would wrap around.
  Status s = (*t)->CopyToHost(got_t, 8, sizeof(want.t) - 4);
  CHECK(s.code() == StatusCode::kOutOfRange);
  CHECK(s.message() == "a copy to the host of 8 bytes at offset 28 is outside the device buffer of 32 bytes");
  CHECK((*x)->CopyFromHost(want.x, 4, UINT64_MAX).code() == StatusCode::kOutOfRange);
  CHECK((*x)->CopyFromHost(want.x, UINT64_MAX, 4).code() == StatusCode::kOutOfRange);
  x->reset();
  y->reset();
  t->reset();
  CHECK((*runtime)->live_buffers() == before);
  std::remove(path.c_str());
}

// SessionOptions::functions: one session runs several functions of a module in one set of
// arenas, as large as the largest function's. "wide" computes what "main" does in the upper
// half of a 128-byte arena.
TEST_CASE("a session runs several functions in shared arenas", "[vm]") {
  serializer::ExecutableSpec spec = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  REQUIRE(spec.functions.size() == 1);
  serializer::Function wide = spec.functions[0];
  wide.name = "wide";
  wide.arenas[0].bytes = 128;
  auto shift = [](serializer::Slot& slot) {
    if (slot.kind == serializer::SlotKind::Arena) slot.offset += 64;
  };
  for (serializer::Command& command : wide.commands) {
    if (auto* d = std::get_if<serializer::DispatchCommand>(&command))
      for (serializer::Slot& slot : d->bindings) shift(slot);
    if (auto* f = std::get_if<serializer::FillCommand>(&command)) shift(f->target);
  }
  spec.functions.push_back(wide);
  std::vector<uint8_t> bytes = serializer::WriteExecutable(spec);
  std::string path = "/tmp/hexir_vm_test_functions." + std::to_string(::getpid()) + ".hxb";
  REQUIRE(WriteFileAtomically(path, bytes.data(), bytes.size()).ok());
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  auto module = Module::Load(**runtime, path);
  REQUIRE(module.ok());
  auto main_only = Session::Create(*module);
  REQUIRE(main_only.ok());
  CHECK((*main_only)->arena_bytes() == 64);
  TestIo want;
  REQUIRE(want.Run(**main_only).ok());

  SessionOptions options;
  options.functions = {"wide", "main", "wide"};  // the default named again, and twice: once each
  options.poison = true;  // each function's ALLOC poisons the shared arena: nothing leaks between them
  auto session = Session::Create(*module, options);
  REQUIRE(session.ok());
  CHECK((*session)->arena_bytes() == 128);  // the largest, not the sum
  for (int run = 0; run < 2; ++run) {
    for (const char* function : {"wide", "main"}) {
      TestIo io;
      TensorView in{io.x, ElementType::kF32, Span<const int64_t>(io.xs, 2)};
      MutableTensorView outs[] = {{io.y, ElementType::kF32, Span<const int64_t>(io.xs, 2)},
                                  {io.t, ElementType::kF32, Span<const int64_t>(io.ts, 1)}};
      INFO("function " << function << ", run " << run);
      REQUIRE((*session)->Run(function, Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).ok());
      CHECK(std::memcmp(io.y, want.y, sizeof(io.y)) == 0);
      CHECK(std::memcmp(io.t, want.t, sizeof(io.t)) == 0);
    }
  }
  TestIo io;
  TensorView in{io.x, ElementType::kF32, Span<const int64_t>(io.xs, 2)};
  MutableTensorView outs[] = {{io.y, ElementType::kF32, Span<const int64_t>(io.xs, 2)},
                              {io.t, ElementType::kF32, Span<const int64_t>(io.ts, 1)}};
  Status s = (*main_only)->Run("wide", Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2));
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message() == "function 'wide' is not one this session runs (it runs: main); name it in "
                       "SessionOptions::functions");
  options.functions = {"narrow"};
  auto unknown = Session::Create(*module, options);
  REQUIRE(!unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  // The memory limit counts the shared arenas once (and each function's staging: the host stages an
  // input that arrives misaligned).
  options.functions = {"wide"};
  options.memory_limit_bytes = 100;
  auto limited = Session::Create(*module, options);
  REQUIRE(!limited.ok());
  INFO(limited.status().message());
  CHECK(limited.status().message().find("a session of functions 'main', 'wide' needs 192 bytes of device memory "
                                        "(arenas 128, staging 64)") != std::string::npos);
  session->reset();
  main_only->reset();
  module->reset();
  CHECK((*runtime)->live_buffers() == 0);
  std::remove(path.c_str());
}

TEST_CASE("corrupt modules are refused at load", "[vm]") {
  auto runtime = Runtime::Create({});
  REQUIRE(runtime.ok());
  std::string path = WriteTestExecutable("corrupt");
  auto bytes = ReadFileToString(path);
  REQUIRE(bytes.ok());
  std::string cut = bytes->substr(0, bytes->size() / 2);
  REQUIRE(WriteFileAtomically(path, cut.data(), cut.size()).ok());
  auto module = Module::Load(**runtime, path);
  REQUIRE_FALSE(module.ok());
  CHECK(module.status().message().find("truncated") != std::string::npos);
  std::remove(path.c_str());
  CHECK(Module::Load(**runtime, path).status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace hexir

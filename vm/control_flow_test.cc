// LOOP and IF commands (ONNX Loop and If): trips, trip counts, conditions read back from the
// device, the trip number, scan outputs stacked by strided copies, nesting; and the reader's
// refusal of malformed bodies.
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "hexir/hexir.h"
#include "serializer/executable_spec.h"
#include "serializer/file_format.h"
#include "vm/test_executable.h"

namespace hexir {
namespace {

using serializer::CopyCommand;
using serializer::LoopCommand;
using serializer::Slot;
using serializer::SlotKind;

struct Loaded {
  std::unique_ptr<Runtime> runtime;
  std::shared_ptr<const Module> module;
  std::string path;
  ~Loaded() {
    module.reset();
    if (!path.empty()) std::remove(path.c_str());
  }
};

Status Load(const serializer::ExecutableSpec& spec, const std::string& tag, Loaded& loaded) {
  auto runtime = Runtime::Create({});
  if (!runtime.ok()) return runtime.status();
  loaded.runtime = std::move(*runtime);
  loaded.path = testing::WriteSpec(spec, tag);
  auto module = Module::Load(*loaded.runtime, loaded.path);
  if (!module.ok()) return module.status();
  loaded.module = std::move(*module);
  return Status::Ok();
}

TEST_CASE("loops run their trip count and stack scan rows, and branches pick by their condition", "[vm]") {
  Loaded loaded;
  REQUIRE(Load(testing::ControlFlowExecutableSpec(HEXIR_TEST_KERNELS_PATH), "loop", loaded).ok());
  SessionOptions options;
  options.functions = {"main", "once", "nested"};
  auto session = Session::Create(loaded.module, options);
  REQUIRE(session.ok());
  float x[8] = {0.5f, 1, 2, 3, -4, 5, 0.25f, 1.5f};
  int64_t eight[] = {8}, four_by_eight[] = {4, 8}, two_by_eight[] = {2, 8};
  for (int64_t n : {0, 1, 3, 4, 10, -2}) {
    for (bool c : {false, true}) {
      float y[8] = {}, rows[32] = {};
      int64_t last = 42;
      uint8_t flag = c;
      TensorView ins[] = {{x, ElementType::kF32, Span<const int64_t>(eight, 1)},
                          {&n, ElementType::kI64, Span<const int64_t>()},
                          {&flag, ElementType::kBool, Span<const int64_t>()}};
      MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(eight, 1)},
                                  {rows, ElementType::kF32, Span<const int64_t>(four_by_eight, 2)},
                                  {&last, ElementType::kI64, Span<const int64_t>()}};
      INFO("n " << n << ", c " << c);
      REQUIRE((*session)->Run("main", Span<const TensorView>(ins, 3), Span<const MutableTensorView>(outs, 3)).ok());
      // ONNX Loop: min(n, the static bound) trips, none for a negative count.
      int64_t trips = std::clamp<int64_t>(n, 0, 4);
      CHECK(last == trips - 1);
      for (int i = 0; i < 8; ++i) {
        float acc = x[i] - static_cast<float>(trips);
        CHECK(y[i] == (c ? std::max(acc, 0.0f) : acc));
        for (int64_t t = 0; t < trips; ++t) CHECK(rows[t * 8 + i] == x[i] - static_cast<float>(t + 1));
        for (int64_t t = trips; t < 4; ++t) CHECK(rows[t * 8 + i] == 0.0f);  // untouched
      }
    }
  }
  float y[8] = {}, rows[16] = {};
  TensorView in{x, ElementType::kF32, Span<const int64_t>(eight, 1)};
  MutableTensorView once_out{y, ElementType::kF32, Span<const int64_t>(eight, 1)};
  REQUIRE((*session)->Run("once", Span<const TensorView>(&in, 1), Span<const MutableTensorView>(&once_out, 1)).ok());
  for (int i = 0; i < 8; ++i) CHECK(y[i] == x[i] - 1);  // the body cleared the condition
  MutableTensorView nested_out[] = {{y, ElementType::kF32, Span<const int64_t>(eight, 1)},
                                    {rows, ElementType::kF32, Span<const int64_t>(two_by_eight, 2)}};
  REQUIRE((*session)->Run("nested", Span<const TensorView>(&in, 1), Span<const MutableTensorView>(nested_out, 2)).ok());
  for (int i = 0; i < 8; ++i) {
    CHECK(y[i] == x[i] - 6);
    CHECK(rows[i] == x[i] - 3);  // the outer trip's row, after the inner loop's 3 trips
    CHECK(rows[8 + i] == x[i] - 6);
  }
}

// Each malformed control flow command, in a copy of the good spec, is refused at load.
// A while-loop whose condition never clears (an ONNX Loop whose trip count and condition come
// from the request) runs until its RunOptions stop it: a deadline, or a flag another thread
// sets; the session then runs the next request.
TEST_CASE("runaway loops stop at a deadline or when cancelled", "[vm]") {
  using Clock = std::chrono::steady_clock;
  serializer::ExecutableSpec spec = testing::ControlFlowExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  serializer::Function spin = spec.functions[1];  // "once": a while loop that clears its flag
  spin.name = "spin";
  spin.commands.erase(spin.commands.begin() + 5);  // the fill that clears it: now it never does
  for (serializer::Command& c : spin.commands)
    if (auto* l = std::get_if<LoopCommand>(&c)) l->body_length = 1;
  spec.functions.push_back(spin);
  Loaded loaded;
  REQUIRE(Load(spec, "spin", loaded).ok());
  SessionOptions options;
  options.functions = {"spin", "once"};
  auto session = Session::Create(loaded.module, options);
  REQUIRE(session.ok());
  float x[8] = {}, y[8] = {};
  int64_t eight[] = {8};
  TensorView in{x, ElementType::kF32, Span<const int64_t>(eight, 1)};
  MutableTensorView out{y, ElementType::kF32, Span<const int64_t>(eight, 1)};
  auto run = [&](std::string_view function, const RunOptions& options) {
    return (*session)->Run(function, Span<const TensorView>(&in, 1), Span<const MutableTensorView>(&out, 1), options);
  };

  RunOptions deadline;
  Clock::time_point start = Clock::now();
  deadline.deadline = start + std::chrono::milliseconds(100);
  Status s = run("spin", deadline);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(s.code() == StatusCode::kDeadlineExceeded);
  CHECK(s.message().find("passed its deadline after") != std::string::npos);
  CHECK(seconds >= 0.1);
  CHECK(seconds < 2.0);

  std::atomic<bool> stop{false};
  RunOptions cancel;
  cancel.cancel = &stop;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.store(true);
  });
  s = run("spin", cancel);
  canceller.join();
  CHECK(s.code() == StatusCode::kCancelled);
  // Already cancelled: not one command runs.
  s = run("once", cancel);
  CHECK(s.code() == StatusCode::kCancelled);
  CHECK(s.message().find("after 0 commands") != std::string::npos);
  // The session runs the next request as usual, with or without options.
  x[0] = 3.0f;
  RunOptions generous;
  generous.deadline = Clock::now() + std::chrono::seconds(60);
  REQUIRE(run("once", generous).ok());
  CHECK(y[0] == 2.0f);
  REQUIRE((*session)->Run("once", Span<const TensorView>(&in, 1), Span<const MutableTensorView>(&out, 1)).ok());
}

TEST_CASE("the reader refuses malformed loops and branches", "[vm]") {
  const serializer::ExecutableSpec good = testing::ControlFlowExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  {
    Loaded loaded;
    REQUIRE(Load(good, "good", loaded).ok());
  }
  auto refused = [&](const char* tag, auto mutate, const std::string& message) {
    serializer::ExecutableSpec spec = good;
    spec.functions[0].arenas.push_back({0, 0, 64});  // a second arena, for an ALLOC to misplace
    mutate(spec.functions[0].commands);
    Loaded loaded;
    Status s = Load(spec, tag, loaded);
    INFO(tag << ": " << s.message());
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find(message) != std::string::npos);
  };
  using Commands = std::vector<serializer::Command>;
  auto loop = [](Commands& c) -> LoopCommand& { return std::get<LoopCommand>(c[3]); };
  refused("past_end", [&](Commands& c) { loop(c).body_length = 7; },
          "LOOP body of 7 commands ends at command 11, past the end of the function (10)");
  refused("unbounded", [&](Commands& c) {
    loop(c).max_trips = 0;
    loop(c).trip_count.reset();
  }, "LOOP has no bound");
  refused("stride_outside", [&](Commands& c) { loop(c).body_length = 1; },
          "COPY with a target stride outside a LOOP with a maximum trip count");
  refused("stride_past_output", [&](Commands& c) { loop(c).max_trips = 5; },
          "COPY target at the last trip: slot [128, +32) exceeds its space of 128 bytes");
  refused("short_condition", [&](Commands& c) {
    std::get<serializer::IfCommand>(c[6]).condition.length = 4;
  }, "IF condition slot holds 4 bytes, not 1");
  refused("if_past_end", [&](Commands& c) { std::get<serializer::IfCommand>(c[6]).else_length = 3; },
          "IF body of 4 commands ends at command 11");
  // A loop in the then branch may not reach into the else branch (which runs when the loop's
  // trip is not counted).
  refused("loop_into_else", [&](Commands& c) {
    LoopCommand inner;
    inner.body_length = 2;
    inner.max_trips = 1;
    c.insert(c.begin() + 7, inner);
    std::get<serializer::IfCommand>(c[6]).then_length = 2;
  }, "LOOP body of 2 commands ends at command 10, past the end of the body around it (9)");
  refused("written_input", [&](Commands& c) { loop(c).iteration = Slot{SlotKind::Input, 1, 0, 8}; },
          "LOOP iteration: writes into input 1");
  refused("alloc_inside", [&](Commands& c) {
    c.insert(c.begin() + 4, serializer::AllocCommand{1});
    loop(c).body_length = 3;
  }, "ALLOC inside a LOOP or IF body");
  refused("too_deep", [&](Commands& c) {
    // kMaxBodyNesting + 1 loops, each the whole rest of the function.
    Commands deep(c.begin(), c.begin() + 3);
    size_t rest = c.size() - 3;
    for (size_t k = 0; k <= serializer::kMaxBodyNesting; ++k) {
      LoopCommand l;
      l.max_trips = 1;
      l.body_length = static_cast<uint32_t>(serializer::kMaxBodyNesting - k + rest);
      deep.push_back(l);
    }
    deep.insert(deep.end(), c.begin() + 3, c.end());
    c = deep;
  }, "bodies nest more than 32 deep");
}

}  // namespace
}  // namespace hexir

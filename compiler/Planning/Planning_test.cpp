// Unit tests of the four memory planning steps on small call_tir graphs. The expected
// lifetimes, offsets, sharing and commands are worked out by hand in the comments.
#include <catch2/catch.hpp>

#include "Driver/Registration.h"
#include "Planning/BufferLiveness.h"
#include "Planning/EmitCommands.h"
#include "Planning/InPlaceSharing.h"
#include "Planning/MoveValues.h"
#include "Planning/PlanMemory.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace mlir::hexir {
namespace {

namespace ser = ::hexir::serializer;
namespace planner = ::hexir::planner;

// Kernels: an elementwise negation (may write over its input), a sum of two, a "window"
// kernel (a reduction over its input: it may not), and one with an empty result.
constexpr const char *kKernels = R"mlir(
#id = affine_map<(i) -> (i)>
#all = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func private @neg(%x: tensor<16xf32>) -> tensor<16xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
func.func private @add(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
func.func private @window(%x: tensor<16xf32>) -> tensor<16xf32> attributes {hexir.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %o : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
func.func private @nothing(%x: tensor<16xf32>) -> tensor<0xf32> attributes {hexir.kernel} {
  %e = tensor.empty() : tensor<0xf32>
  return %e : tensor<0xf32>
}
)mlir";

struct Fixture {
  Fixture() {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    target.name = "test";
    target.memorySpaces.push_back({"host", 0, 64, true, true});
  }

  func::FuncOp parse(const std::string &graph) {
    module = parseSourceString<ModuleOp>(std::string(kKernels) + graph, &context);
    REQUIRE(module);
    return module->lookupSymbol<func::FuncOp>("main");
  }

  // Runs the four steps as buildFunction does, with a library holding every kernel.
  void plan(func::FuncOp main, bool schedule = false) {
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      ser::TensorSignature sig;
      sig.donated = main.getArgAttr(i, kDonateAttrName) != nullptr;
      fn.inputs.push_back(sig);
    }
    fn.outputs.resize(main.getNumResults());
    auto computed = computeBufferLiveness(main, target, schedule, report);
    REQUIRE(succeeded(computed));
    live = std::move(*computed);
    InPlaceCandidates candidates = findKernelCandidates(live, *module);
    shareDyingInputs(live, candidates);
    ties = tieDonatedInputs(live, candidates, fn);
    ConstantPool pool(spec);
    auto constants = poolConstants({main}, pool, spec, report);
    REQUIRE(succeeded(constants));
    moveValuesToFit(live, target, report.constant_bytes, PlanMemoryOptions(), report);
    auto planned = planMemory(main, live, target, PlanMemoryOptions(), report);
    REQUIRE(succeeded(planned));
    memory = std::move(*planned);
    ser::KernelLibrary library;
    for (const char *name : {"add", "neg", "window", "nothing"})
      library.entries.push_back({name, 2, 1, 0, {}});
    spec.libraries.push_back(library);
    REQUIRE(succeeded(emitCommands(main, live, ties, memory, *constants, locateKernels(spec.libraries), fn)));
  }

  const ser::DispatchCommand &dispatch(size_t command) { return std::get<ser::DispatchCommand>(fn.commands[command]); }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  TargetDescription target;
  planner::PlanReport report;
  BufferLiveness live;
  DonationTies ties;
  MemoryPlan memory;
  ser::ExecutableSpec spec;
  ser::Function fn;
};

bool sameSlot(const ser::Slot &s, ser::SlotKind kind, uint32_t index, uint64_t offset, uint64_t length) {
  return s.kind == kind && s.index == index && s.offset == offset && s.length == length;
}

TEST_CASE("liveness: buffers live from their dispatch to their last reader, and outputs and copies are not buffers",
          "[planning]") {
  Fixture f;
  // a = neg(x) at step 0, read at 1 and 2; b = window(a) at 1, read at 2; c = add(a, b) at 2 is
  // output 0; x is returned too (output 1): copied after the last dispatch, at step 3.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @window(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @add(%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %c, %x : tensor<16xf32>, tensor<16xf32>
}
)mlir");
  auto live = computeBufferLiveness(main, f.target, /*schedule=*/false, f.report);
  REQUIRE(succeeded(live));
  REQUIRE(live->problem.buffers.size() == 2);
  const planner::BufferRequest &a = live->problem.buffers[0], &b = live->problem.buffers[1];
  CHECK(a.name == "neg");
  CHECK((a.size == 64 && a.alignment == 64 && a.first == 0 && a.last == 2 && a.space == 0));
  CHECK(b.name == "window");
  CHECK((b.size == 64 && b.first == 1 && b.last == 2));
  CHECK(live->copyStep == 3);
  REQUIRE(live->copies.size() == 1);
  CHECK(live->copies[0].second == 1u);
  CHECK(live->outputOf.size() == 1);
  CHECK(f.report.naive_bytes == 3 * 64);
  CHECK(f.report.lower_bound_before_sharing == 128);
}

TEST_CASE("liveness: a returned dispatch result is its output buffer, also for later readers", "[planning]") {
  Fixture f;
  // a is read by b and returned: its dispatch writes it straight into output 1, which b then
  // reads; neither needs a buffer.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @window(%a) : (tensor<16xf32>) -> tensor<16xf32>
  return %b, %a : tensor<16xf32>, tensor<16xf32>
}
)mlir");
  auto live = computeBufferLiveness(main, f.target, false, f.report);
  REQUIRE(succeeded(live));
  // b is output 0; a is output 1, written straight by its dispatch: no buffer, no copy.
  CHECK(live->problem.buffers.empty());
  CHECK(live->copies.empty());
  CHECK(live->outputOf.size() == 2);
}

TEST_CASE("in place: an elementwise result takes over the input buffer that dies at its dispatch", "[planning]") {
  Fixture f;
  // a = neg(x) [0, 1]; b = neg(a) [1, 2] may take over a (a dies at 1, same size);
  // c = window(b) [2, 3] may not take over b (a reduction reads other elements); y = add(c, c).
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%c, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  f.plan(main);
  REQUIRE(f.live.problem.buffers.size() == 3);
  CHECK(f.live.problem.buffers[1].may_share_with == 0);   // b over a
  CHECK(f.live.problem.buffers[2].may_share_with == -1);  // c not over b
  // Offsets: a and b share [0, 64); c is live with b at step 2, so it goes to [64, 128).
  CHECK(f.memory.plan.offsets == std::vector<uint64_t>{0, 0, 64});
  REQUIRE(f.memory.arenas.size() == 1);
  CHECK((f.memory.arenas[0].memory_space == 0 && f.memory.arenas[0].bytes == 128 &&
         f.memory.arenas[0].alignment == 64));
  CHECK(f.report.arena_bytes == 128);
  CHECK(f.report.lower_bound_before_sharing == 128);
}

TEST_CASE("donation: an output written over a donated input that dies there is tied to it", "[planning]") {
  Fixture f;
  // y = neg(cache) with cache donated and read nowhere else: tied. z = neg(x): x is not donated.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%cache: tensor<16xf32> {hexir.donate}, %x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %y = hexir.call_tir @neg(%cache) : (tensor<16xf32>) -> tensor<16xf32>
  %z = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %y, %z : tensor<16xf32>, tensor<16xf32>
}
)mlir");
  f.plan(main);
  CHECK(f.fn.outputs[0].tied_input == 0);
  CHECK(f.fn.outputs[1].tied_input == -1);
  REQUIRE(f.fn.commands.size() == 2);  // no arena: no ALLOC
  CHECK(f.dispatch(0).aliases == std::vector<int32_t>{0});
  CHECK(f.dispatch(1).aliases == std::vector<int32_t>{-1});
}

TEST_CASE("donation: an output written after every read of a donated input is tied to it", "[planning]") {
  Fixture f;
  // cache is read by two dispatches; y, its size, is written by a later one that does not read
  // it (a KV cache's slabs read, then concatenated): tied, no alias. z is written while cache
  // is still to be read by w: not tied.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%cache: tensor<16xf32> {hexir.donate}, %other: tensor<16xf32> {hexir.donate})
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a = hexir.call_tir @neg(%cache) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%cache) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %z = hexir.call_tir @neg(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %w = hexir.call_tir @add(%other, %z) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v = hexir.call_tir @neg(%w) : (tensor<16xf32>) -> tensor<16xf32>
  return %y, %v, %z : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
)mlir");
  f.plan(main);
  CHECK(f.fn.outputs[0].tied_input == 0);   // y after both reads of cache
  CHECK(f.fn.outputs[1].tied_input == 1);   // v after w, the only reader of other
  CHECK(f.fn.outputs[2].tied_input == -1);  // z: cache already tied; other still to be read by w
}

TEST_CASE("commands: arenas, slots, aliases and copies", "[planning]") {
  Fixture f;
  // a = neg(x) -> arena 0 [0, +64); b = neg(a) in place over a; y = add(b, x) -> output 0;
  // x returned again -> a COPY into output 1.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%b, %x) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y, %x : tensor<16xf32>, tensor<16xf32>
}
)mlir");
  f.plan(main);
  REQUIRE(f.fn.arenas.size() == 1);
  CHECK(f.fn.arenas[0].bytes == 64);
  REQUIRE(f.fn.commands.size() == 5);
  REQUIRE(std::holds_alternative<ser::AllocCommand>(f.fn.commands[0]));
  CHECK(std::get<ser::AllocCommand>(f.fn.commands[0]).arena == 0);

  const ser::DispatchCommand &first = f.dispatch(1), &second = f.dispatch(2), &third = f.dispatch(3);
  CHECK((first.library == 0 && first.entry == 1));  // "neg" is entry 1 of library 0
  CHECK(sameSlot(first.bindings[0], ser::SlotKind::Input, 0, 0, 64));
  CHECK(sameSlot(first.bindings[1], ser::SlotKind::Arena, 0, 0, 64));
  CHECK(first.aliases == std::vector<int32_t>{-1});
  CHECK(sameSlot(second.bindings[1], ser::SlotKind::Arena, 0, 0, 64));
  CHECK(second.aliases == std::vector<int32_t>{0});  // written over its input 0
  CHECK((third.entry == 0 && third.num_inputs == 2));
  CHECK(sameSlot(third.bindings[2], ser::SlotKind::Output, 0, 0, 64));

  REQUIRE(std::holds_alternative<ser::CopyCommand>(f.fn.commands[4]));
  const auto &copy = std::get<ser::CopyCommand>(f.fn.commands[4]);
  CHECK(sameSlot(copy.source, ser::SlotKind::Input, 0, 0, 64));
  CHECK(sameSlot(copy.target, ser::SlotKind::Output, 1, 0, 64));
}

TEST_CASE("commands: an empty result has a slot in an arena that exists", "[planning]") {
  Fixture f;
  // Only an empty tensor needs arena memory (a loop's carried [0] value): its space still gets
  // an arena, of 0 bytes, and an ALLOC; its slot names that arena (it named arena -1).
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %z = hexir.call_tir @nothing(%x) : (tensor<16xf32>) -> tensor<0xf32>
  %y = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  f.plan(main);
  REQUIRE(f.fn.arenas.size() == 1);
  CHECK(f.fn.arenas[0].bytes == 0);
  REQUIRE(std::holds_alternative<ser::AllocCommand>(f.fn.commands[0]));
  CHECK(std::get<ser::AllocCommand>(f.fn.commands[0]).arena == 0);
  const ser::DispatchCommand &empty = f.dispatch(1);
  CHECK(empty.entry == 3);  // "nothing"
  CHECK(sameSlot(empty.bindings[1], ser::SlotKind::Arena, 0, 0, 0));
}

TEST_CASE("commands: constants are slots of the pool or of the filled constants", "[planning]") {
  Fixture f;
  // A splat becomes a 64-byte range of the filled constants; a dense constant 64 stored bytes.
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %s = arith.constant dense<2.0> : tensor<16xf32>
  %d = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32>
  %a = hexir.call_tir @add(%x, %s) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%a, %d) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  f.plan(main);
  CHECK(f.report.filled_constant_bytes == 64);
  CHECK(f.report.constant_bytes == 64);
  CHECK(sameSlot(f.dispatch(1).bindings[1], ser::SlotKind::FilledConstant, 0, 0, 64));
  CHECK(sameSlot(f.dispatch(2).bindings[1], ser::SlotKind::Constant, 0, 0, 64));
  // a = add(x, s) may be written over neither x (an input) nor s (a constant).
  CHECK(sameSlot(f.dispatch(1).bindings[2], ser::SlotKind::Arena, 0, 0, 64));
}

} // namespace
} // namespace mlir::hexir

namespace mlir::hexir {
namespace {

// a = window(x) [0, 3] is read only at 3; b = neg(x) [1, 2]; c = window(b) [2, 3]: at step 2,
// a, b and c are live (192 bytes) and a is idle.
constexpr const char *kIdleAtPeak = R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = hexir.call_tir @window(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%a, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir";

TEST_CASE("moves: a value idle at the peak goes to the larger space and back", "[planning]") {
  Fixture f;
  // 128 bytes of SRAM, DRAM behind it. a = window(x) [0, 3] is read only at 3; b = neg(x)
  // [1, 2]; c = window(b) [2, 3]: at step 2, a, b and c need 192 bytes. a is idle there (and a
  // reduction, not recomputed): it is copied to DRAM after dispatch 0 and back before dispatch
  // 3, and the SRAM holds two buffers at most.
  f.target.memorySpaces = {{"sram", 128, 64, true, true}, {"dram", 0, 64, true, true}};
  f.target.constantSpace = 1;
  f.target.transfers = {{0, 1, 1e9, 1e-6}, {1, 0, 1e9, 1e-6}};
  func::FuncOp main = f.parse(kIdleAtPeak);
  f.plan(main);
  REQUIRE(f.live.moves.size() == 1);
  const BufferLiveness::Move &m = f.live.moves[0];
  CHECK((m.buffer == 0 && m.outAfter == 0 && m.inBefore == 3));
  const planner::BufferRequest &a = f.live.problem.buffers[0], &parked = f.live.problem.buffers[m.parked],
                               &back = f.live.problem.buffers[m.reloaded];
  CHECK((a.first == 0 && a.last == 0 && a.space == 0));
  CHECK((parked.first == 0 && parked.last == 3 && parked.space == 1));
  CHECK((back.first == 3 && back.last == 3 && back.space == 0));
  CHECK(f.report.arena_bytes == 128);
  CHECK(f.report.moved_bytes == 128);
  REQUIRE(f.report.moves.size() == 1);
  CHECK((f.report.moves[0].name == "window" && f.report.moves[0].to_space == "dram"));
  // ALLOC sram, ALLOC dram, neg -> a, COPY a out, neg -> b, window, COPY a back, add.
  REQUIRE(f.fn.commands.size() == 8);
  const auto &out = std::get<ser::CopyCommand>(f.fn.commands[3]);
  const auto &in = std::get<ser::CopyCommand>(f.fn.commands[6]);
  CHECK(sameSlot(out.source, ser::SlotKind::Arena, 0, f.memory.plan.offsets[0], 64));
  CHECK(sameSlot(out.target, ser::SlotKind::Arena, 1, f.memory.plan.offsets[m.parked], 64));
  CHECK(sameSlot(in.source, ser::SlotKind::Arena, 1, f.memory.plan.offsets[m.parked], 64));
  CHECK(sameSlot(in.target, ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
  // The add reads the copy that came back.
  CHECK(sameSlot(f.dispatch(7).bindings[0], ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
}

TEST_CASE("moves: nothing moves without a space to move to, or when every value is in use", "[planning]") {
  Fixture f;
  f.target.memorySpaces = {{"sram", 128, 64, true, true}, {"dram", 0, 64, true, true}};
  f.target.constantSpace = 1;
  func::FuncOp main = f.parse(kIdleAtPeak);
  auto live = computeBufferLiveness(main, f.target, false, f.report);
  REQUIRE(succeeded(live));
  moveValuesToFit(*live, f.target, 0, PlanMemoryOptions(), f.report);  // no transfers
  CHECK(live->moves.empty());
  f.target.transfers = {{0, 1, 1e9, 0}, {1, 0, 1e9, 0}};
  f.target.memorySpaces[0].capacity = 64;  // b and c are both used at step 2: 128 bytes, always
  moveValuesToFit(*live, f.target, 0, PlanMemoryOptions(), f.report);
  for (const BufferLiveness::Move &m : live->moves)
    CHECK(live->problem.buffers[m.buffer].first == 0);  // only a could move
  CHECK(failed(planMemory(main, *live, f.target, PlanMemoryOptions(), f.report)));
}

TEST_CASE("moves: an elementwise value of the inputs is recomputed where it is needed again", "[planning]") {
  Fixture f;
  // One 128-byte space, no other. a = neg(x) [0, 3] reads only the input: instead of waiting
  // through step 2 (a, b and c: 192 bytes) it is dropped after dispatch 0 and neg runs again
  // before dispatch 3, into a new buffer the add reads.
  f.target.memorySpaces = {{"host", 128, 64, true, true}};
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%a, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  f.plan(main);
  REQUIRE(f.live.moves.size() == 1);
  const BufferLiveness::Move &m = f.live.moves[0];
  CHECK((m.recompute && m.buffer == 0 && m.outAfter == 0 && m.inBefore == 3));
  CHECK(f.report.arena_bytes == 128);
  CHECK((f.report.recomputed_bytes == 64 && f.report.moved_bytes == 0));
  REQUIRE(f.report.moves.size() == 1);
  CHECK(f.report.moves[0].to_space.empty());
  // ALLOC, neg -> a, neg -> b, window, neg again -> a', add: no copy.
  REQUIRE(f.fn.commands.size() == 6);
  const ser::DispatchCommand &again = f.dispatch(4);
  CHECK(again.entry == f.dispatch(1).entry);
  CHECK(sameSlot(again.bindings[0], ser::SlotKind::Input, 0, 0, 64));
  CHECK(sameSlot(again.bindings[1], ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
  CHECK(sameSlot(f.dispatch(5).bindings[0], ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
}


TEST_CASE("moves: an elementwise value of an intermediate still held is recomputed from it", "[planning]") {
  Fixture f;
  // 192 bytes, no other space. t = window(x) [0, 5] is read at 1 and 5; a = neg(t) [1, 4];
  // b = neg(x) [2, 3]; c = window(b) [3, 4]; d = add(a, c); y = add(d, t). At step 3, t, a, b
  // and c need 256 bytes. t is idle there but a reduction; a is idle and its input t is still
  // held at step 4, so neg(t) runs again before dispatch 4, reading t where it is.
  f.target.memorySpaces = {{"host", 192, 64, true, true}};
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %t = hexir.call_tir @window(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %a = hexir.call_tir @neg(%t) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %d = hexir.call_tir @add(%a, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%d, %t) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  f.plan(main);
  REQUIRE(f.live.moves.size() == 1);
  const BufferLiveness::Move &m = f.live.moves[0];
  CHECK((m.recompute && m.buffer == 1 && m.outAfter == 1 && m.inBefore == 4));
  CHECK(f.report.arena_bytes == 192);
  CHECK(f.report.recomputed_bytes == 64);
  CHECK(f.report.recompute_seconds > 0);
  // ALLOC, window -> t, neg -> a, neg -> b, window -> c, neg(t) again -> a', add, add.
  REQUIRE(f.fn.commands.size() == 8);
  const ser::DispatchCommand &again = f.dispatch(5);
  CHECK(again.entry == f.dispatch(2).entry);
  CHECK(sameSlot(again.bindings[0], ser::SlotKind::Arena, 0, f.memory.plan.offsets[0], 64));  // t
  CHECK(sameSlot(again.bindings[1], ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
  CHECK(sameSlot(f.dispatch(6).bindings[0], ser::SlotKind::Arena, 0, f.memory.plan.offsets[m.reloaded], 64));
}

TEST_CASE("moves: an elementwise value whose input is gone by then is not recomputed", "[planning]") {
  Fixture f;
  // As above, but a = neg(s) with s = window(x) read by nothing later: s is gone at step 4,
  // so a cannot be recomputed and, with no space to move to, nothing fits 192 bytes.
  f.target.memorySpaces = {{"host", 192, 64, true, true}};
  func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %s = hexir.call_tir @window(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %a = hexir.call_tir @neg(%s) : (tensor<16xf32>) -> tensor<16xf32>
  %t = hexir.call_tir @window(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %d = hexir.call_tir @add(%a, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%d, %t) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
  auto live = computeBufferLiveness(main, f.target, false, f.report);
  REQUIRE(succeeded(live));
  moveValuesToFit(*live, f.target, 0, PlanMemoryOptions(), f.report);
  CHECK(live->moves.empty());
}

TEST_CASE("moves: the machine's rates choose between recomputing and moving", "[planning]") {
  // a = neg(x) [0, 3] is idle at step 2 and could be either recomputed (its dispatch reads and
  // writes 128 bytes) or moved to DRAM and back (64 bytes each way).
  for (bool slowProcessor : {false, true}) {
    Fixture f;
    f.target.memorySpaces = {{"sram", 128, 64, true, true}, {"dram", 0, 64, true, true}};
    f.target.constantSpace = 1;
    f.target.transfers = {{0, 1, 1e9, 1e-6}, {1, 0, 1e9, 1e-6}};  // 2.128 us out and back
    // 128 bytes at 1 KB/s: 0.128 s; at 1 TB/s: 0.128 ns.
    f.target.compute = {1e12, slowProcessor ? 1e3 : 1e12};
    func::FuncOp main = f.parse(R"mlir(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = hexir.call_tir @neg(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = hexir.call_tir @window(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %y = hexir.call_tir @add(%a, %c) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
)mlir");
    f.plan(main);
    REQUIRE(f.live.moves.size() == 1);
    CHECK(f.live.moves[0].recompute == !slowProcessor);
    CHECK(f.report.moved_bytes == (slowProcessor ? 128u : 0u));
    CHECK(f.report.recomputed_bytes == (slowProcessor ? 0u : 64u));
  }
}

} // namespace
} // namespace mlir::hexir

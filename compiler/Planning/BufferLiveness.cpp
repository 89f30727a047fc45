//===- BufferLiveness.cpp - which values need memory, and when ------------===//
#include "Planning/BufferLiveness.h"

#include "Planning/GraphValues.h"
#include "Planning/InPlaceAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "base/alignment.h"
#include "serializer/file_format.h"
#include "planner/lower_bound.h"
#include "planner/schedule.h"

#include <numeric>

using namespace mlir;
using namespace mlir::hexir;
namespace planner = ::hexir::planner;

size_t BufferLiveness::bufferAt(Value result, int64_t step) const {
  size_t buffer = bufferOf.lookup(result);
  // A reloaded copy may itself have moved out and back again later.
  for (bool moved = true; moved;) {
    moved = false;
    for (const Move &m : moves)
      if (m.buffer == buffer && step >= m.inBefore) {
        buffer = m.reloaded;
        moved = true;
        break;
      }
  }
  return buffer;
}

Value BufferLiveness::resolve(Value v) const {
  Value root = rootOf(v);
  for (;;) {
    if (auto it = argValue.find(root); it != argValue.end()) {
      root = rootOf(it->second);
      continue;
    }
    if (auto it = writesInto.find(root); it != writesInto.end()) {
      root = rootOf(it->second);
      continue;
    }
    return root;
  }
}

bool BufferLiveness::isInput(Value v) const {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->getParentOp() == const_cast<func::FuncOp &>(graph).getOperation();
}

namespace {

// Lays out the steps of `block` (a graph's or a body's) in program order, with each loop's and
// if's marker steps around their bodies' (BufferLiveness::Region).
class Linearizer {
public:
  explicit Linearizer(BufferLiveness &live) : live(live) {}

  LogicalResult block(Block &body) {
    for (Operation &op : body) {
      if (auto d = dyn_cast<CallTirOp>(op)) {
        live.stepOf[d] = step();
        live.dispatches.push_back(d);
      } else if (auto loop = dyn_cast<LoopOp>(op)) {
        live.controlOps.push_back(loop);
        if (failed(this->loop(loop)))
          return failure();
      } else if (auto branch = dyn_cast<IfOp>(op)) {
        live.controlOps.push_back(branch);
        if (failed(this->branch(branch)))
          return failure();
      } else if (!isView(&op) && !isa<arith::ConstantOp, func::ReturnOp>(op)) {
        return op.emitError() << "'" << op.getName() << "' survived dispatch formation; Hexir cannot run it";
      }
    }
    return success();
  }

private:
  int64_t step() { return next++; }

public:
  int64_t steps() const { return next; }

private:

  FailureOr<func::FuncOp> body(Operation *op, FlatSymbolRefAttr name) {
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name);
    if (!fn)
      return op->emitError() << "body " << name << " is missing";
    // The runtime nests bodies at most this deep.
    if (depth >= static_cast<int>(::hexir::serializer::kMaxBodyNesting))
      return op->emitError() << "loop and if bodies nest more than " << ::hexir::serializer::kMaxBodyNesting
                             << " deep; Hexir runs at most that many levels";
    if (llvm::is_contained(running, fn.getOperation()))
      return op->emitError() << "body " << name << " runs itself (directly or through the bodies it runs); "
                                "Hexir's loops and ifs do not recurse";
    // Its values are planned for one op's steps: a second op running it needs a copy.
    if (llvm::is_contained(live.bodies, fn))
      return op->emitError() << "body " << name << " is run by two loops or ifs of this function; each needs its own";
    live.bodies.push_back(fn);
    return fn;
  }

  // Steps of a body's block, one level deeper.
  LogicalResult nested(Block &body) {
    ++depth;
    running.push_back(body.getParentOp());
    LogicalResult result = block(body);
    running.pop_back();
    --depth;
    return result;
  }

  LogicalResult loop(LoopOp loop) {
    FailureOr<func::FuncOp> fn = body(loop, loop.getBodyAttr());
    if (failed(fn))
      return failure();
    BufferLiveness::Region &region = live.regions[loop];
    region.begin = step();
    Block &entry = fn->getBody().front();
    // Argument 0, the trip number, has a buffer of its own (the LOOP writes it).
    for (auto [k, init] : llvm::enumerate(loop.getInits()))
      live.argValue[entry.getArgument(1 + k)] = loop.getResult(k);
    for (auto [k, capture] : llvm::enumerate(loop.getCaptures()))
      live.argValue[entry.getArgument(1 + loop.getInits().size() + k)] = capture;
    if (failed(nested(entry)))
      return failure();
    int64_t end = step();
    live.regions[loop].end = end;
    live.stepOf[loop] = end;
    live.returnStep[*fn] = end;
    return success();
  }

  LogicalResult branch(IfOp op) {
    FailureOr<func::FuncOp> thenFn = body(op, op.getThenBodyAttr());
    FailureOr<func::FuncOp> elseFn = body(op, op.getElseBodyAttr());
    if (failed(thenFn) || failed(elseFn))
      return failure();
    int64_t begin = step();
    for (auto [fn, captures] : {std::make_pair(*thenFn, op.getThenCaptures()), std::make_pair(*elseFn, op.getElseCaptures())})
      for (auto [k, capture] : llvm::enumerate(captures))
        live.argValue[fn.getBody().front().getArgument(k)] = capture;
    if (failed(nested(thenFn->getBody().front())))
      return failure();
    int64_t middle = step();
    live.returnStep[*thenFn] = middle;
    if (failed(nested(elseFn->getBody().front())))
      return failure();
    int64_t end = step();
    live.returnStep[*elseFn] = end;
    live.regions[op] = {begin, middle, end};
    live.stepOf[op] = end;
    return success();
  }

  BufferLiveness &live;
  int64_t next = 0;
  int depth = 0;  // bodies around the block being laid out
  SmallVector<Operation *> running;  // those bodies, outermost first
};

// The step at which `use` reads its value.
int64_t readStep(const BufferLiveness &live, OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<func::ReturnOp>(user)) {
    auto it = live.returnStep.find(user->getParentOp());
    return it != live.returnStep.end() ? it->second : live.copyStep;
  }
  // A loop reads its trip count and first carried values at its start, an if its condition;
  // captures at every trip (to its end).
  if (auto loop = dyn_cast<LoopOp>(user)) {
    unsigned n = use.getOperandNumber();
    bool atStart = n < loop.getInits().size() + (loop.getTripCount() ? 1 : 0);
    return atStart ? live.regions.lookup(loop).begin : live.regions.lookup(loop).end;
  }
  if (auto op = dyn_cast<IfOp>(user))
    return use.getOperandNumber() == 0 ? live.regions.lookup(op).begin : live.regions.lookup(op).end;
  return live.stepOf.lookup(user);
}

// The last step reading `v` (through views), from `from` on.
int64_t lastRead(const BufferLiveness &live, Value v, int64_t from) {
  int64_t last = from;
  forEachUse(v, [&](OpOperand &use) { last = std::max(last, readStep(live, use)); });
  return last;
}

// Body results a dispatch may write straight into the op's result (BufferLiveness::writesInto).
void findDirectWrites(BufferLiveness &live) {
  // `v` as the dispatch result of body `fn` it is (through views), returned once by `ret`.
  auto ownResult = [](func::FuncOp fn, func::ReturnOp ret, Value v) -> Value {
    Value root = rootOf(v);
    auto d = root.getDefiningOp<CallTirOp>();
    if (!d || d->getParentOp() != fn.getOperation())
      return {};
    unsigned returned = 0;
    for (Value r : ret.getOperands())
      returned += rootOf(r) == root;
    return returned == 1 ? root : Value();
  };
  for (Operation *op : live.controlOps) {
    if (auto branch = dyn_cast<IfOp>(op)) {
      // A result buffer is the branch's alone: nothing else in it reads it.
      for (FlatSymbolRefAttr name : {branch.getThenBodyAttr(), branch.getElseBodyAttr()}) {
        auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name);
        auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
        for (auto [k, v] : llvm::enumerate(ret.getOperands()))
          if (Value root = ownResult(fn, ret, v))
            live.writesInto[root] = branch.getResult(k);
      }
      continue;
    }
    auto loop = cast<LoopOp>(op);
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, loop.getBodyAttr());
    Block &entry = fn.getBody().front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    // A carried value's buffer holds the old value until the dispatch writing the new one: every
    // read of the old one in the trip (its return included) must come before that dispatch.
    for (unsigned k = 0; k < loop.getInits().size(); ++k) {
      Value root = ownResult(fn, ret, ret.getOperand(k));
      if (!root)
        continue;
      auto d = root.getDefiningOp<CallTirOp>();
      int64_t writes = live.stepOf.lookup(d);
      // Or the dispatch reads it itself, once, as an input its kernel may write that result
      // over (InPlaceAnalysis.h): an elementwise update of the carried value.
      SmallVector<unsigned> sameStep;
      bool readBefore = true;
      forEachUse(entry.getArgument(1 + k), [&](OpOperand &use) {
        int64_t step = readStep(live, use);
        if (step == writes && use.getOwner() == d.getOperation())
          sameStep.push_back(use.getOperandNumber());
        else
          readBefore &= step < writes;
      });
      if (readBefore && sameStep.size() == 1) {
        auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(d, d.getCalleeAttr());
        readBefore = kernel && llvm::is_contained(
                                   findInPlaceCandidates(kernel)[cast<OpResult>(root).getResultNumber()], sameStep[0]);
      } else if (!sameStep.empty()) {
        readBefore = false;
      }
      if (readBefore)
        live.writesInto[root] = loop.getResult(k);
    }
  }
}

// Every value that needs arena memory, and the steps it is live.
LogicalResult planLifetimes(BufferLiveness &live, const TargetDescription &target, planner::PlanReport &report) {
  for (const MemorySpaceDescription &space : target.memorySpaces)
    live.problem.capacities.push_back(space.capacity);
  uint64_t alignment = std::max<uint64_t>(kBufferAlignment, target.memorySpaces[target.arenaSpace].alignment);
  auto addBuffer = [&](Value v, uint64_t bytes, int64_t first, int64_t last, std::string name) {
    planner::BufferRequest request;
    // Sizes are padded to the alignment, so the bound and the packing speak of the same
    // bytes (a 16-byte buffer still occupies a 64-byte slot).
    request.size = ::hexir::AlignUp(bytes, alignment);
    request.alignment = alignment;
    request.first = first;
    request.last = last;
    request.space = target.arenaSpace;
    request.name = std::move(name);
    live.bufferValue.push_back(v);
    live.problem.buffers.push_back(request);
    return live.problem.buffers.size() - 1;
  };
  for (CallTirOp d : live.dispatches) {
    for (Value result : d.getResults()) {
      if (live.outputOf.count(result) || live.writesInto.count(result))
        continue;
      int64_t step = live.stepOf[d];
      live.bufferOf[result] =
          addBuffer(result, byteSize(result.getType()), step, lastRead(live, result, step), bufferName(d, result));
    }
  }
  // Loop and if results: from the op's start (the first carried values are copied in there).
  for (Operation *op : live.controlOps) {
    const BufferLiveness::Region &region = live.regions.lookup(op);
    auto loop = dyn_cast<LoopOp>(op);
    std::string name = (loop ? loop.getBody() : cast<IfOp>(op).getThenBody()).str();
    for (Value result : op->getResults())
      if (!live.outputOf.count(result))
        live.bufferOf[result] = addBuffer(result, byteSize(result.getType()), region.begin,
                                        lastRead(live, result, region.end),
                                        name + "#" + std::to_string(cast<OpResult>(result).getResultNumber()));
    if (!loop)
      continue;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, loop.getBodyAttr());
    Block &entry = fn.getBody().front();
    // The trip number, written by the LOOP before each trip.
    if (!entry.getArgument(0).use_empty())
      live.bufferOf[entry.getArgument(0)] = addBuffer(entry.getArgument(0), 8, region.begin, region.end, name + ".trip");
    // Next carried values that are other carried values (a swap): through buffers of their own.
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    for (unsigned k = 0; k < loop.getInits().size(); ++k) {
      Value source = live.resolve(ret.getOperand(k));
      auto result = dyn_cast<OpResult>(source);
      if (result && result.getOwner() == op && result.getResultNumber() != k)
        live.swapBuffers[op].push_back(
            {k, addBuffer(source, byteSize(source.getType()), region.end, region.end, name + ".swap")});
    }
  }
  for (CallTirOp d : live.dispatches)
    for (Value r : d.getResults())
      report.naive_bytes += byteSize(r.getType());
  for (Operation &op : live.graph.getBody().front())
    if (isView(&op))
      report.naive_bytes += byteSize(op.getResult(0).getType());
  std::vector<uint64_t> bound = planner::MaxLoadLowerBound(live.problem);
  report.lower_bound_before_sharing = bound.size() > target.arenaSpace ? bound[target.arenaSpace] : 0;
  return success();
}

} // namespace

FailureOr<BufferLiveness> mlir::hexir::computeBufferLiveness(func::FuncOp graph, const TargetDescription &target,
                                                             bool schedule, planner::PlanReport &report) {
  BufferLiveness live;
  live.graph = graph;
  Block &body = graph.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  bool controlFlow = llvm::any_of(body, [](Operation &op) { return isa<LoopOp, IfOp>(op); });
  SmallVector<CallTirOp> program;
  for (Operation &op : body) {
    if (auto call = dyn_cast<CallTirOp>(op))
      program.push_back(call);
    else if (!controlFlow && !isView(&op) && !isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError() << "'" << op.getName() << "' survived dispatch formation; Hexir cannot run it";
  }

  // Graph outputs.
  llvm::DenseSet<Value> copied;
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    Value root = rootOf(v);
    // (A loop's or an if's result too: its copies and trips then write the caller's buffer.)
    if (isa_and_nonnull<CallTirOp, LoopOp, IfOp>(root.getDefiningOp()) && !live.outputOf.count(root)) {
      live.outputOf[root] = k;
    } else {
      live.copies.push_back({v, k});
      copied.insert(root);
    }
  }

  // Schedule. Values read by the final copies must live to the end; the scheduler does not
  // count them (it cannot move the copies).
  llvm::DenseMap<Operation *, size_t> programIndex;
  for (auto [i, d] : llvm::enumerate(program))
    programIndex[d] = i;
  planner::ScheduleGraph sg;
  sg.num_nodes = program.size();
  for (CallTirOp d : program) {
    for (Value r : d.getResults()) {
      planner::ScheduleGraph::Value value;
      value.size = byteSize(r.getType());
      value.producer = static_cast<int64_t>(programIndex[d]);
      value.counted = !live.outputOf.count(r) && !copied.contains(r);
      forEachReader(r, [&](Operation *user) {
        if (auto c = dyn_cast<CallTirOp>(user))
          value.consumers.push_back(programIndex[c]);
      });
      sg.values.push_back(value);
    }
  }
  std::vector<size_t> order(program.size());
  std::iota(order.begin(), order.end(), 0);
  report.peak_program_order = planner::PeakMemory(sg, order);
  report.peak_scheduled = report.peak_program_order;
  if (controlFlow) {
    // Program order, bodies inside their ops' steps.
    Linearizer linearizer(live);
    if (failed(linearizer.block(body)))
      return failure();
    live.copyStep = linearizer.steps();
    findDirectWrites(live);
    if (failed(planLifetimes(live, target, report)))
      return failure();
    // The peak: the most bytes live at one step (the planner's load bound before sharing).
    report.peak_program_order = report.peak_scheduled = report.lower_bound_before_sharing;
    return live;
  }
  if (schedule) {
    std::vector<size_t> scheduled = planner::ScheduleForMemory(sg);
    uint64_t peak = planner::PeakMemory(sg, scheduled);
    if (peak < report.peak_program_order) {
      order = scheduled;
      report.peak_scheduled = peak;
    }
  }
  for (size_t i : order) {
    live.stepOf[program[i]] = static_cast<int64_t>(live.dispatches.size());
    live.dispatches.push_back(program[i]);
  }
  live.copyStep = static_cast<int64_t>(live.dispatches.size());

  live.copyStep = static_cast<int64_t>(live.dispatches.size());
  if (failed(planLifetimes(live, target, report)))
    return failure();
  return live;
}

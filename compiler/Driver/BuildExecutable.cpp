//===- BuildExecutable.cpp - call_tir graph to an executable spec ---------===//
#include "Driver/BuildExecutable.h"

#include "Dialect/HexirDialect.h"
#include "Driver/ConstantPool.h"
#include "Driver/InPlaceAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include "base/alignment.h"
#include "planner/lower_bound.h"
#include "planner/schedule.h"
#include "planner/solver.h"
#include "planner/verifier.h"

#include <numeric>

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;
namespace planner = ::hexir::planner;

namespace {

constexpr uint64_t kBufferAlignment = 64;

bool isView(Operation *op) { return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op); }

uint64_t byteSize(Type type) {
  auto t = cast<RankedTensorType>(type);
  return static_cast<uint64_t>(t.getNumElements()) * (t.getElementTypeBitWidth() / 8);
}

// The value whose memory `v` reinterprets (reshapes are views of their source).
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

// Calls `fn` for every op reading `v` directly or through views.
template <typename Fn> void forEachReader(Value v, Fn fn) {
  SmallVector<Value> worklist = {v};
  while (!worklist.empty()) {
    Value cur = worklist.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      if (isView(user))
        worklist.push_back(user->getResult(0));
      else
        fn(user);
    }
  }
}

std::string nameOf(func::FuncOp fn, unsigned index, bool isResult) {
  auto attr = isResult ? fn.getResultAttrOfType<StringAttr>(index, kNameAttrName)
                       : fn.getArgAttrOfType<StringAttr>(index, kNameAttrName);
  if (attr)
    return attr.str();
  return (isResult ? "output" : "input") + std::to_string(index);
}

FailureOr<ser::TensorSignature> signature(func::FuncOp fn, Type type, unsigned index, bool isResult) {
  auto t = cast<RankedTensorType>(type);
  Type et = t.getElementType();
  ser::TensorSignature sig;
  if (et.isF32())
    sig.element_type = ser::ElementType::F32;
  else if (et.isSignlessInteger(64))
    sig.element_type = ser::ElementType::I64;
  else if (et.isSignlessInteger(32))
    sig.element_type = ser::ElementType::I32;
  else
    return fn.emitError() << "only f32, i64 and i32 inputs and outputs are supported, got " << type;
  sig.name = nameOf(fn, index, isResult);
  sig.shape.assign(t.getShape().begin(), t.getShape().end());
  return sig;
}

std::string bufferName(CallTirOp d, Value result) {
  std::string name = d.getCallee().str();
  if (d.getNumResults() > 1)
    name += "#" + std::to_string(cast<OpResult>(result).getResultNumber());
  return name;
}

} // namespace

FailureOr<BuiltFunction> mlir::hexir::buildFunction(func::FuncOp graph,
                                                    const llvm::StringMap<unsigned> &entryIndex,
                                                    const llvm::StringMap<unsigned> &workgroups,
                                                    ser::ExecutableSpec &spec,
                                                    const BuildExecutableOptions &options) {
  BuiltFunction built;
  ser::Function &fn = built.function;
  planner::PlanReport &report = built.report;
  fn.name = graph.getSymName().str();
  report.function = fn.name;
  FunctionType type = graph.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto sig = signature(graph, type.getInput(i), i, false);
    if (failed(sig))
      return failure();
    sig->donated = graph.getArgAttr(i, kDonateAttrName) != nullptr;
    fn.inputs.push_back(*sig);
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto sig = signature(graph, type.getResult(i), i, true);
    if (failed(sig))
      return failure();
    fn.outputs.push_back(*sig);
  }

  Block &body = graph.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<CallTirOp> program;
  for (Operation &op : body) {
    if (auto call = dyn_cast<CallTirOp>(op))
      program.push_back(call);
    else if (!isView(&op) && !isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError() << "'" << op.getName()
                            << "' survived dispatch formation; Hexir cannot run it";
  }

  // Graph outputs: the dispatch producing a returned value writes into the output buffer; any
  // other returned value (an input, a constant, a value returned twice) is copied at the end.
  llvm::DenseMap<Value, unsigned> outputOf;
  SmallVector<std::pair<Value, unsigned>> copies;
  llvm::DenseSet<Value> copied;
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    Value root = rootOf(v);
    if (root.getDefiningOp<CallTirOp>() && !outputOf.count(root)) {
      outputOf[root] = k;
    } else {
      copies.push_back({v, k});
      copied.insert(root);
    }
  }

  // 1. Schedule. Values read by the final copies must live to the end; the scheduler does
  // not count them (it cannot move the copies).
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
      value.counted = !outputOf.count(r) && !copied.contains(r);
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
  if (options.schedule) {
    std::vector<size_t> scheduled = planner::ScheduleForMemory(sg);
    uint64_t peak = planner::PeakMemory(sg, scheduled);
    if (peak < report.peak_program_order) {
      order = scheduled;
      report.peak_scheduled = peak;
    }
  }
  SmallVector<CallTirOp> dispatches;
  llvm::DenseMap<Operation *, int64_t> stepOf;
  for (size_t i : order) {
    stepOf[program[i]] = static_cast<int64_t>(dispatches.size());
    dispatches.push_back(program[i]);
  }
  int64_t copyStep = static_cast<int64_t>(dispatches.size());

  // 2. Lifetimes: every dispatch result that is not an output is an arena buffer.
  planner::Problem problem;
  llvm::DenseMap<Value, size_t> bufferOf;
  SmallVector<Value> bufferValue;
  for (CallTirOp d : dispatches) {
    for (Value result : d.getResults()) {
      if (outputOf.count(result))
        continue;
      int64_t last = stepOf[d];
      forEachReader(result, [&](Operation *user) {
        if (isa<func::ReturnOp>(user))
          last = std::max(last, copyStep);
        else
          last = std::max(last, stepOf.lookup(user));
      });
      planner::BufferRequest request;
      // Sizes are padded to the alignment, so the bound and the packing speak of the same
      // bytes (a 16-byte buffer still occupies a 64-byte slot).
      request.size = ::hexir::AlignUp(byteSize(result.getType()), kBufferAlignment);
      request.alignment = kBufferAlignment;
      request.first = stepOf[d];
      request.last = last;
      request.name = bufferName(d, result);
      bufferOf[result] = problem.buffers.size();
      bufferValue.push_back(result);
      problem.buffers.push_back(request);
    }
  }
  for (CallTirOp d : program)
    for (Value r : d.getResults())
      report.naive_bytes += byteSize(r.getType());
  for (Operation &op : body)
    if (isView(&op))
      report.naive_bytes += byteSize(op.getResult(0).getType());
  std::vector<uint64_t> boundBefore = planner::MaxLoadLowerBound(problem);
  report.lower_bound_before_sharing = boundBefore.empty() ? 0 : boundBefore[0];

  // Which inputs each dispatch's kernel may overwrite with each result (InPlaceAnalysis.h).
  ModuleOp module = graph->getParentOfType<ModuleOp>();
  llvm::DenseMap<Operation *, SmallVector<SmallVector<unsigned>>> inPlaceCandidates;
  for (CallTirOp d : dispatches) {
    auto kernel = module.lookupSymbol<func::FuncOp>(d.getCallee());
    inPlaceCandidates[d] = kernel ? findInPlaceCandidates(kernel)
                                  : SmallVector<SmallVector<unsigned>>(d.getNumResults());
  }

  // 3. In place: a result may take over an input buffer that dies at its dispatch.
  llvm::DenseSet<size_t> takenOver;
  if (options.inPlace) {
    for (CallTirOp d : dispatches) {
      const SmallVector<SmallVector<unsigned>> &candidates = inPlaceCandidates[d];
      for (auto [k, result] : llvm::enumerate(d.getResults())) {
        auto own = bufferOf.find(result);
        if (own == bufferOf.end())
          continue;  // an output: written straight into the caller's buffer
        for (unsigned i : candidates[k]) {
          Value root = rootOf(d.getInputs()[i]);
          auto input = bufferOf.find(root);
          if (input == bufferOf.end() || takenOver.contains(input->second))
            continue;
          const planner::BufferRequest &in = problem.buffers[input->second];
          if (in.last != stepOf[d] || in.size != problem.buffers[own->second].size)
            continue;
          // Any other operand reading the same memory must be an identity read too.
          bool safe = true;
          for (auto [j, other] : llvm::enumerate(d.getInputs()))
            if (j != i && rootOf(other) == root && !llvm::is_contained(candidates[k], j))
              safe = false;
          if (!safe)
            continue;
          problem.buffers[own->second].may_share_with = static_cast<int64_t>(input->second);
          takenOver.insert(input->second);
          break;
        }
      }
    }
  }

  // Donated inputs: an output whose dispatch could write it over a donated input that dies
  // there is tied to that input; the caller may then bind both to one buffer (in place).
  llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>> tieOf;  // dispatch -> (result, input)
  llvm::DenseSet<unsigned> tiedInputs;
  for (CallTirOp d : dispatches) {
    const SmallVector<SmallVector<unsigned>> &candidates = inPlaceCandidates[d];
    for (auto [k, result] : llvm::enumerate(d.getResults())) {
      auto out = outputOf.find(result);
      if (out == outputOf.end())
        continue;
      for (unsigned i : candidates[k]) {
        auto arg = dyn_cast<BlockArgument>(rootOf(d.getInputs()[i]));
        if (!arg || !fn.inputs[arg.getArgNumber()].donated || tiedInputs.contains(arg.getArgNumber()) ||
            byteSize(arg.getType()) != byteSize(result.getType()))
          continue;
        // The input must die here: no other reader, and not returned.
        bool dies = true;
        forEachReader(arg, [&](Operation *user) { dies &= user == d.getOperation(); });
        unsigned reads = 0;
        for (Value v : d.getInputs())
          reads += rootOf(v) == arg;
        if (!dies || reads != 1)
          continue;
        fn.outputs[out->second].tied_input = static_cast<int32_t>(arg.getArgNumber());
        tiedInputs.insert(arg.getArgNumber());
        tieOf[d] = {static_cast<unsigned>(k), i};
        break;
      }
    }
  }

  // 4. Pack the arena.
  planner::SolveOptions solveOptions;
  solveOptions.time_limit_seconds = options.planTimeLimit;
  solveOptions.max_search_nodes = options.planSearchNodes;
  auto solution = planner::Solve(problem, solveOptions);
  if (!solution.ok())
    return graph.emitError() << "memory planning failed: " << solution.status().message();
  const planner::Plan &plan = solution->plan;
  if (options.verifyPlan) {
    ::hexir::Status verified = planner::Verify(problem, plan);
    if (!verified.ok())
      return graph.emitError() << "memory plan failed verification (compiler bug): "
                               << verified.message();
  }
  fn.arena_bytes = plan.space_sizes.empty() ? 0 : plan.space_sizes[0];
  fn.arena_alignment = kBufferAlignment;
  report.arena_bytes = fn.arena_bytes;
  if (!solution->spaces.empty()) {
    report.lower_bound_bytes = solution->spaces[0].lower_bound_bytes;
    report.method = solution->spaces[0].method;
  }
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    const planner::BufferRequest &r = problem.buffers[b];
    int64_t shared = plan.shared(b);
    report.buffers.push_back({r.name, r.size, plan.offsets[b], r.first, r.last,
                              shared >= 0 ? problem.buffers[shared].name : std::string()});
  }

  // Constants: stored or filled.
  ConstantPool pool(spec);
  llvm::DenseMap<Value, ser::Slot> constantSlot;
  uint64_t storedBefore = spec.constants.size(), filledBefore = spec.filled_constants_bytes;
  for (Operation &op : body) {
    auto c = dyn_cast<arith::ConstantOp>(op);
    if (!c || !isa<RankedTensorType>(c.getType()) || c->use_empty())
      continue;
    auto slot = pool.add(c);
    if (failed(slot))
      return failure();
    constantSlot[c.getResult()] = *slot;
  }
  report.constant_bytes = spec.constants.size() - storedBefore;
  report.filled_constant_bytes = spec.filled_constants_bytes - filledBefore;

  auto slotOf = [&](Value v) -> ser::Slot {
    Value root = rootOf(v);
    ser::Slot slot;
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      slot.space = ser::MemorySpace::Input;
      slot.index = arg.getArgNumber();
    } else if (auto it = constantSlot.find(root); it != constantSlot.end()) {
      slot = it->second;
    } else if (outputOf.count(root)) {
      slot.space = ser::MemorySpace::Output;
      slot.index = outputOf[root];
    } else {
      slot.space = ser::MemorySpace::Arena;
      slot.offset = plan.offsets[bufferOf[root]];
    }
    slot.length = byteSize(v.getType());
    return slot;
  };

  if (fn.arena_bytes > 0)
    fn.commands.push_back(ser::AllocCommand{ser::MemorySpace::Arena, fn.arena_bytes,
                                            static_cast<uint32_t>(kBufferAlignment)});
  for (CallTirOp d : dispatches) {
    auto it = entryIndex.find(d.getCallee());
    if (it == entryIndex.end())
      return d.emitError() << "kernel " << d.getCalleeAttr() << " was not compiled";
    ser::DispatchCommand cmd;
    cmd.entry = it->second;
    cmd.workgroups = {workgroups.lookup(d.getCallee()), 1, 1};
    if (cmd.workgroups[0] == 0)
      cmd.workgroups[0] = 1;
    for (Value v : d.getInputs())
      cmd.bindings.push_back(slotOf(v));
    for (Value v : d.getResults())
      cmd.bindings.push_back(slotOf(v));
    cmd.num_inputs = d.getInputs().size();
    cmd.aliases.assign(d.getNumResults(), -1);
    if (auto tie = tieOf.find(d); tie != tieOf.end())
      cmd.aliases[tie->second.first] = static_cast<int32_t>(tie->second.second);
    for (auto [k, result] : llvm::enumerate(d.getResults())) {
      auto own = bufferOf.find(result);
      if (own == bufferOf.end() || plan.shared(own->second) < 0)
        continue;
      Value taken = bufferValue[plan.shared(own->second)];
      for (auto [i, input] : llvm::enumerate(d.getInputs()))
        if (rootOf(input) == taken) {
          cmd.aliases[k] = static_cast<int32_t>(i);
          break;
        }
    }
    fn.commands.push_back(cmd);
  }
  for (auto [v, k] : copies) {
    ser::Slot target;
    target.space = ser::MemorySpace::Output;
    target.index = k;
    target.length = byteSize(v.getType());
    fn.commands.push_back(ser::CopyCommand{slotOf(v), target});
  }
  return built;
}

//===- EmitCommands.cpp - the command list of a function ------------------===//
#include "Planning/EmitCommands.h"

#include "Planning/ConstantPool.h"
#include "Planning/GraphValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

llvm::StringMap<KernelLocation> mlir::hexir::locateKernels(ArrayRef<ser::KernelLibrary> libraries) {
  llvm::StringMap<KernelLocation> kernels;
  for (auto [l, library] : llvm::enumerate(libraries))
    for (auto [e, entry] : llvm::enumerate(library.entries))
      kernels[entry.name] = {static_cast<uint32_t>(l), static_cast<uint32_t>(e), std::max(entry.workgroups, 1u), {}};
  // `<kernel>__1`, `<kernel>__2`, ...: consecutive parts of `<kernel>`.
  for (auto &[name, location] : kernels)
    for (unsigned part = 1;; ++part) {
      auto it = kernels.find((llvm::Twine(name) + "__" + llvm::Twine(part)).str());
      if (it == kernels.end())
        break;
      location.parts.push_back({it->second.library, it->second.entry, it->second.workgroups, {}});
    }
  return kernels;
}

FailureOr<llvm::DenseMap<Value, ser::Slot>> mlir::hexir::poolConstants(func::FuncOp graph, ConstantPool &pool,
                                                                     const ser::ExecutableSpec &spec,
                                                                     ::hexir::planner::PlanReport &report) {
  llvm::DenseMap<Value, ser::Slot> constantSlot;
  for (Operation &op : graph.getBody().front()) {
    auto c = dyn_cast<arith::ConstantOp>(op);
    if (!c || !isa<RankedTensorType>(c.getType()) || c->use_empty())
      continue;
    auto slot = pool.add(c);
    if (failed(slot))
      return failure();
    constantSlot[c.getResult()] = *slot;
  }
  report.constant_bytes = spec.constants.size();
  report.filled_constant_bytes = spec.filled_constants_bytes;
  return constantSlot;
}

LogicalResult mlir::hexir::emitCommands(func::FuncOp graph, const BufferLiveness &live, const DonationTies &ties,
                                        const MemoryPlan &plan, const llvm::DenseMap<Value, ser::Slot> &constantSlot,
                                        const llvm::StringMap<KernelLocation> &kernels, ser::Function &fn) {

  // The arena slot of buffer `buffer` holding `v`.
  auto bufferSlot = [&](size_t buffer, Value v) {
    ser::Slot slot;
    slot.kind = ser::SlotKind::Arena;
    slot.index = static_cast<uint32_t>(plan.arenaOfSpace[live.problem.buffers[buffer].space]);
    slot.offset = plan.plan.offsets[buffer];
    slot.length = byteSize(v.getType());
    return slot;
  };
  // Where `v` is when step `step` reads it (a moved value is in its reloaded copy from its
  // move's return on).
  auto slotOf = [&](Value v, int64_t step) -> ser::Slot {
    Value root = rootOf(v);
    ser::Slot slot;
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      slot.kind = ser::SlotKind::Input;
      slot.index = arg.getArgNumber();
    } else if (auto it = constantSlot.find(root); it != constantSlot.end()) {
      slot = it->second;
    } else if (auto out = live.outputOf.find(root); out != live.outputOf.end()) {
      slot.kind = ser::SlotKind::Output;
      slot.index = out->second;
    } else {
      slot = bufferSlot(live.bufferAt(root, step), root);
    }
    slot.length = byteSize(v.getType());
    return slot;
  };
  // Dispatch `d` reading its inputs where they are at `step` and writing `results` (`aliases`:
  // the input each result is written over, or -1), then its further parts with the same
  // bindings.
  auto dispatch = [&](CallTirOp d, int64_t step, ArrayRef<ser::Slot> results,
                      ArrayRef<int32_t> aliases) -> LogicalResult {
    auto it = kernels.find(d.getCallee());
    if (it == kernels.end())
      return d.emitError() << "kernel " << d.getCalleeAttr() << " was not compiled";
    ser::DispatchCommand cmd;
    cmd.library = it->second.library;
    cmd.entry = it->second.entry;
    cmd.workgroups = {it->second.workgroups, 1, 1};
    for (Value in : d.getInputs())
      cmd.bindings.push_back(slotOf(in, step));
    cmd.bindings.insert(cmd.bindings.end(), results.begin(), results.end());
    cmd.num_inputs = d.getInputs().size();
    cmd.aliases.assign(aliases.begin(), aliases.end());
    for (const std::string &name : sourceNames(d))
      cmd.sources.push_back(name);
    fn.commands.push_back(cmd);
    for (const KernelLocation &part : it->second.parts) {
      cmd.library = part.library;
      cmd.entry = part.entry;
      cmd.workgroups = {part.workgroups, 1, 1};
      fn.commands.push_back(cmd);
    }
    return success();
  };
  // A rematerialized value's dispatch again, before `step`, writing its recomputed buffer (its
  // inputs are where they are at `step`: MoveValues only recomputes from values still there).
  auto recompute = [&](const BufferLiveness::Move &m, int64_t step) -> LogicalResult {
    Value v = live.bufferValue[m.buffer];
    return dispatch(v.getDefiningOp<CallTirOp>(), step, {bufferSlot(m.reloaded, v)}, {-1});
  };
  // Moves out after a step and back before one: copies between the arena and the parking
  // space, or the dispatch again for a recomputed value. Those back before the same step run
  // latest-chosen first: a value recomputed there may read one that a later move brings back
  // there, never the other way round.
  auto copiesAt = [&](int64_t step, bool back) -> LogicalResult {
    if (back) {
      for (const BufferLiveness::Move &m : llvm::reverse(live.moves)) {
        if (m.inBefore != step)
          continue;
        Value v = live.bufferValue[m.buffer];
        if (m.recompute) {
          if (failed(recompute(m, step)))
            return failure();
        } else {
          fn.commands.push_back(ser::CopyCommand{bufferSlot(m.parked, v), bufferSlot(m.reloaded, v)});
        }
      }
      return success();
    }
    for (const BufferLiveness::Move &m : live.moves)
      if (m.outAfter == step && !m.recompute)
        fn.commands.push_back(ser::CopyCommand{bufferSlot(m.buffer, live.bufferValue[m.buffer]),
                                               bufferSlot(m.parked, live.bufferValue[m.buffer])});
    return success();
  };

  fn.arenas = plan.arenas;
  for (uint32_t a = 0; a < plan.arenas.size(); ++a)
    fn.commands.push_back(ser::AllocCommand{a});
  for (CallTirOp d : live.dispatches) {
    int64_t step = live.stepOf.lookup(d);
    if (failed(copiesAt(step, /*back=*/true)))
      return failure();
    SmallVector<ser::Slot> results;
    for (Value v : d.getResults())
      results.push_back(slotOf(v, step));
    SmallVector<int32_t> aliases(d.getNumResults(), -1);
    if (auto tie = ties.find(d); tie != ties.end())
      aliases[tie->second.first] = static_cast<int32_t>(tie->second.second);
    for (auto [k, result] : llvm::enumerate(d.getResults())) {
      auto own = live.bufferOf.find(result);
      if (own == live.bufferOf.end() || plan.plan.shared(own->second) < 0)
        continue;
      Value taken = live.bufferValue[plan.plan.shared(own->second)];
      for (auto [i, input] : llvm::enumerate(d.getInputs()))
        if (rootOf(input) == taken) {
          aliases[k] = static_cast<int32_t>(i);
          break;
        }
    }
    if (failed(dispatch(d, step, results, aliases)) || failed(copiesAt(step, /*back=*/false)))
      return failure();
  }
  if (failed(copiesAt(live.copyStep, /*back=*/true)))
    return failure();
  for (auto [v, k] : live.copies) {
    ser::Slot target;
    target.kind = ser::SlotKind::Output;
    target.index = k;
    target.length = byteSize(v.getType());
    fn.commands.push_back(ser::CopyCommand{slotOf(v, live.copyStep), target});
  }
  return success();
}

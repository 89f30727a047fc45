//===- EmitCommands.cpp - the command list of a function ------------------===//
#include "Planning/EmitCommands.h"

#include "Planning/ConstantPool.h"
#include "Planning/GraphValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <functional>

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

FailureOr<llvm::DenseMap<Value, ser::Slot>> mlir::hexir::poolConstants(ArrayRef<func::FuncOp> graphs, ConstantPool &pool,
                                                                     const ser::ExecutableSpec &spec,
                                                                     ::hexir::planner::PlanReport &report) {
  llvm::DenseMap<Value, ser::Slot> constantSlot;
  for (func::FuncOp graph : graphs)
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
    Value root = live.resolve(v);
    ser::Slot slot;
    if (live.isInput(root)) {
      slot.kind = ser::SlotKind::Input;
      slot.index = cast<BlockArgument>(root).getArgNumber();
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
  auto sameSlot = [](const ser::Slot &a, const ser::Slot &b) {
    return a.kind == b.kind && a.index == b.index && a.offset == b.offset && a.length == b.length;
  };
  auto copy = [&](const ser::Slot &source, const ser::Slot &target, uint64_t stride = 0) {
    if (stride != 0 || !sameSlot(source, target))
      fn.commands.push_back(ser::CopyCommand{source, target, stride});
  };
  auto bodyOf = [&](Operation *op, FlatSymbolRefAttr name) {
    return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name);
  };
  // A dispatch, with the moves out and back around its step.
  auto emitDispatch = [&](CallTirOp d) -> LogicalResult {
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
      // Written straight into a loop's carried value it reads (BufferLiveness::writesInto).
      if (live.writesInto.count(result))
        for (auto [i, input] : llvm::enumerate(d.getInputs()))
          if (live.resolve(input) == live.resolve(result)) {
            aliases[k] = static_cast<int32_t>(i);
            break;
          }
      auto own = live.bufferOf.find(result);
      if (own == live.bufferOf.end() || plan.plan.shared(own->second) < 0)
        continue;
      Value taken = live.bufferValue[plan.plan.shared(own->second)];
      for (auto [i, input] : llvm::enumerate(d.getInputs()))
        if (live.resolve(input) == taken) {
          aliases[k] = static_cast<int32_t>(i);
          break;
        }
    }
    if (failed(dispatch(d, step, results, aliases)) || failed(copiesAt(step, /*back=*/false)))
      return failure();
    return success();
  };
  // The commands of a graph's or a body's block, loops and ifs as LOOP and IF around theirs.
  std::function<LogicalResult(Block &)> emitBlock = [&](Block &block) -> LogicalResult {
    for (Operation &op : block) {
      if (auto loop = dyn_cast<LoopOp>(op)) {
        const BufferLiveness::Region &region = live.regions.lookup(loop);
        for (auto [k, init] : llvm::enumerate(loop.getInits()))
          copy(slotOf(init, region.begin), slotOf(loop.getResult(k), region.begin));
        func::FuncOp body = bodyOf(loop, loop.getBodyAttr());
        Block &entry = body.getBody().front();
        ser::LoopCommand command;
        command.max_trips = static_cast<uint64_t>(loop.getMaxTrips());
        if (loop.getTripCount())
          command.trip_count = slotOf(loop.getTripCount(), region.begin);
        if (loop.getHasCondition())
          command.condition = slotOf(loop.getResult(0), region.begin);
        if (live.bufferOf.count(entry.getArgument(0)))
          command.iteration = slotOf(entry.getArgument(0), region.begin);
        size_t at = fn.commands.size();
        fn.commands.push_back(command);
        if (failed(emitBlock(entry)))
          return failure();
        // The trip's last copies. The scan rows first: a row may be an old carried value,
        // which the carried copies overwrite. Then swapped carried values through their own
        // buffers, then the carried values.
        auto ret = cast<func::ReturnOp>(entry.getTerminator());
        unsigned carried = loop.getInits().size();
        for (unsigned s = 0; s < loop.getNumScans(); ++s) {
          Value row = ret.getOperand(carried + s);
          ser::Slot target = slotOf(loop.getResult(carried + s), region.end);
          target.length = byteSize(row.getType());
          copy(slotOf(row, region.end), target, target.length);
        }
        llvm::DenseMap<unsigned, ser::Slot> through;
        for (auto [k, buffer] : live.swapBuffers.lookup(loop)) {
          ser::Slot slot;
          slot.kind = ser::SlotKind::Arena;
          slot.index = static_cast<uint32_t>(plan.arenaOfSpace[live.problem.buffers[buffer].space]);
          slot.offset = plan.plan.offsets[buffer];
          slot.length = byteSize(ret.getOperand(k).getType());
          copy(slotOf(ret.getOperand(k), region.end), slot);
          through[k] = slot;
        }
        for (unsigned k = 0; k < carried; ++k)
          copy(through.count(k) ? through[k] : slotOf(ret.getOperand(k), region.end),
               slotOf(loop.getResult(k), region.end));
        std::get<ser::LoopCommand>(fn.commands[at]).body_length = static_cast<uint32_t>(fn.commands.size() - at - 1);
        continue;
      }
      if (auto branch = dyn_cast<IfOp>(op)) {
        const BufferLiveness::Region &region = live.regions.lookup(branch);
        ser::IfCommand command;
        command.condition = slotOf(branch.getCondition(), region.begin);
        size_t at = fn.commands.size();
        fn.commands.push_back(command);
        uint32_t lengths[2];
        int64_t copyStep[2] = {region.middle, region.end};
        FlatSymbolRefAttr names[2] = {branch.getThenBodyAttr(), branch.getElseBodyAttr()};
        for (int side = 0; side < 2; ++side) {
          size_t start = fn.commands.size();
          Block &entry = bodyOf(branch, names[side]).getBody().front();
          if (failed(emitBlock(entry)))
            return failure();
          auto ret = cast<func::ReturnOp>(entry.getTerminator());
          for (auto [k, v] : llvm::enumerate(ret.getOperands()))
            copy(slotOf(v, copyStep[side]), slotOf(branch.getResult(k), copyStep[side]));
          lengths[side] = static_cast<uint32_t>(fn.commands.size() - start);
        }
        auto &emitted = std::get<ser::IfCommand>(fn.commands[at]);
        emitted.then_length = lengths[0];
        emitted.else_length = lengths[1];
        continue;
      }
      auto d = dyn_cast<CallTirOp>(op);
      if (!d)
        continue;  // views, constants, the return
      if (failed(emitDispatch(d)))
        return failure();
    }
    return success();
  };
  // Without control flow, the (possibly scheduled) dispatch order; with it, program order.
  if (live.hasControlFlow()) {
    if (failed(emitBlock(graph.getBody().front())))
      return failure();
  } else {
    for (CallTirOp d : live.dispatches) {
      if (failed(emitDispatch(d)))
        return failure();
    }
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

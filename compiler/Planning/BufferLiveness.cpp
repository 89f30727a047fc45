//===- BufferLiveness.cpp - which values need memory, and when ------------===//
#include "Planning/BufferLiveness.h"

#include "Planning/GraphValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "base/alignment.h"
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

FailureOr<BufferLiveness> mlir::hexir::computeBufferLiveness(func::FuncOp graph, const TargetDescription &target,
                                                             bool schedule, planner::PlanReport &report) {
  BufferLiveness live;
  Block &body = graph.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<CallTirOp> program;
  for (Operation &op : body) {
    if (auto call = dyn_cast<CallTirOp>(op))
      program.push_back(call);
    else if (!isView(&op) && !isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError() << "'" << op.getName() << "' survived dispatch formation; Hexir cannot run it";
  }

  // Graph outputs.
  llvm::DenseSet<Value> copied;
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    Value root = rootOf(v);
    if (root.getDefiningOp<CallTirOp>() && !live.outputOf.count(root)) {
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

  // Lifetimes.
  for (const MemorySpaceDescription &space : target.memorySpaces)
    live.problem.capacities.push_back(space.capacity);
  uint64_t alignment = std::max<uint64_t>(kBufferAlignment, target.memorySpaces[target.arenaSpace].alignment);
  for (CallTirOp d : live.dispatches) {
    for (Value result : d.getResults()) {
      if (live.outputOf.count(result))
        continue;
      int64_t last = live.stepOf[d];
      forEachReader(result, [&](Operation *user) {
        last = std::max(last, isa<func::ReturnOp>(user) ? live.copyStep : live.stepOf.lookup(user));
      });
      planner::BufferRequest request;
      // Sizes are padded to the alignment, so the bound and the packing speak of the same
      // bytes (a 16-byte buffer still occupies a 64-byte slot).
      request.size = ::hexir::AlignUp(byteSize(result.getType()), alignment);
      request.alignment = alignment;
      request.first = live.stepOf[d];
      request.last = last;
      request.space = target.arenaSpace;
      request.name = bufferName(d, result);
      live.bufferOf[result] = live.problem.buffers.size();
      live.bufferValue.push_back(result);
      live.problem.buffers.push_back(request);
    }
  }
  for (CallTirOp d : program)
    for (Value r : d.getResults())
      report.naive_bytes += byteSize(r.getType());
  for (Operation &op : body)
    if (isView(&op))
      report.naive_bytes += byteSize(op.getResult(0).getType());
  std::vector<uint64_t> bound = planner::MaxLoadLowerBound(live.problem);
  report.lower_bound_before_sharing = bound.size() > target.arenaSpace ? bound[target.arenaSpace] : 0;
  return live;
}

//===- BufferLiveness.h - which values need memory, and when ----*- C++ -*-===//
//
// Step 1 of memory planning (see BuildExecutable.h for all four). For a graph in call_tir form:
//  - schedule: a memory-aware order of the dispatches, kept only if it lowers the peak;
//  - outputs: a dispatch producing a returned value writes straight into the caller's output
//    buffer; any other returned value (an input, a constant, a value returned twice) is copied
//    into its output after the last dispatch;
//  - lifetimes: every other dispatch result is a buffer of the planner's problem, live from its
//    dispatch's step to its last reader's (reshapes are views of their source), in the memory
//    space the target plans intermediates in, with the capacities the target gives its spaces.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_BUFFERLIVENESS_H
#define HEXIR_COMPILER_PLANNING_BUFFERLIVENESS_H

#include "Dialect/HexirDialect.h"
#include "Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include "planner/problem.h"
#include "planner/report.h"

namespace mlir::hexir {

struct BufferLiveness {
  SmallVector<CallTirOp> dispatches;            // in the order they run
  llvm::DenseMap<Operation *, int64_t> stepOf;  // dispatch -> its step (index in `dispatches`)
  int64_t copyStep = 0;                         // the step of the final copies
  llvm::DenseMap<Value, unsigned> outputOf;     // results written straight into output k
  SmallVector<std::pair<Value, unsigned>> copies;  // (returned value, output k) copied at the end
  ::hexir::planner::Problem problem;            // a buffer per other dispatch result
  llvm::DenseMap<Value, size_t> bufferOf;       // dispatch result -> its buffer in `problem`
  SmallVector<Value> bufferValue;               // buffer -> the dispatch result it holds
  // Values moved out of the arena's space and back (MoveValues.h): `buffer` holds the value up
  // to step `outAfter`, when it is copied to `parked` (another space); it is copied back into
  // `reloaded` before step `inBefore`, whose readers and later ones read it there. A
  // rematerialized value (`recompute`) has no parked copy: its dispatch runs again before
  // `inBefore`, writing `reloaded`.
  struct Move {
    size_t buffer, parked, reloaded;
    int64_t outAfter, inBefore;
    bool recompute = false;
  };
  SmallVector<Move> moves;
  // The buffer holding a dispatch result when step `step` reads it.
  size_t bufferAt(Value result, int64_t step) const;
};

// Fails (with a diagnostic) on an op that is neither a dispatch, a view nor a constant.
// Fills the report's peaks (program order, scheduled), naive bytes and the lower bound before
// in-place sharing.
FailureOr<BufferLiveness> computeBufferLiveness(func::FuncOp graph, const TargetDescription &target,
                                                bool schedule, ::hexir::planner::PlanReport &report);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_BUFFERLIVENESS_H

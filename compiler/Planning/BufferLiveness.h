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

  // Control flow (hexir.loop, hexir.if). Their bodies' dispatches take steps between the
  // steps of the op itself: a loop's `begin` (its carried values' first copies, the LOOP
  // command) and `end` (each trip's last copies, into the carried values and the scan rows);
  // an if's `begin` (the IF command), `middle` (the then branch's copies into the results) and
  // `end` (the else branch's). Everything a trip reads from outside the loop lives to its
  // `end`, so one plan holds for every trip: nothing is allocated per trip. Without control
  // flow the dispatches may be scheduled; with it they keep program order.
  struct Region {
    int64_t begin = 0, middle = 0, end = 0;
  };
  llvm::DenseMap<Operation *, Region> regions;
  SmallVector<Operation *> controlOps;          // the loops and ifs, in program order
  SmallVector<func::FuncOp> bodies;             // every body function, nested ones included
  llvm::DenseMap<Operation *, int64_t> returnStep;  // body function -> the step its results are copied at
  llvm::DenseMap<Value, Value> argValue;        // body argument -> the value it stands for
  // Body results a dispatch writes straight into the op's result buffer (no copy): into an if's
  // result always, into a loop's carried value when every read of it in the trip comes first.
  llvm::DenseMap<Value, Value> writesInto;
  // A loop's carried values whose next value is another carried value: copied through a
  // buffer of its own first, so each trip's copies read the old values (result k, buffer).
  llvm::DenseMap<Operation *, SmallVector<std::pair<unsigned, size_t>>> swapBuffers;
  bool hasControlFlow() const { return !regions.empty(); }
  // The value whose memory `v` is: through views, body arguments and direct writes.
  Value resolve(Value v) const;
  // Whether `v` (resolved) is an argument of the function being planned: a caller's input.
  bool isInput(Value v) const;
  func::FuncOp graph;
};

// Fails (with a diagnostic) on an op that is neither a dispatch, a view nor a constant.
// Fills the report's peaks (program order, scheduled), naive bytes and the lower bound before
// in-place sharing.
FailureOr<BufferLiveness> computeBufferLiveness(func::FuncOp graph, const TargetDescription &target,
                                                bool schedule, ::hexir::planner::PlanReport &report);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_BUFFERLIVENESS_H

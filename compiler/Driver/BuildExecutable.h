//===- BuildExecutable.h - call_tir graph to an executable spec -*- C++ -*-===//
//
// The last compiler step before the writer: a graph function in call_tir form becomes a
// serializer::Function (signature, commands, slots), and its constants go to the pool.
//
// Memory is planned here, with the MLIR-free planner library:
//  1. schedule: a memory-aware order of the dispatches (kept only if it lowers the peak);
//  2. lifetimes: every dispatch result that is not a graph output is an arena buffer, live
//     from its dispatch to its last reader; reshapes are views sharing their source's memory;
//  3. in place: an elementwise dispatch writes its result into an input buffer that dies at
//     it (the DISPATCH alias bit), when the kernel allows it (InPlaceAnalysis.h);
//  4. packing: planner::Solve, checked by the planner's independent verifier.
// A dispatch producing a graph output writes straight into the caller's output buffer.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H
#define HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include "planner/report.h"
#include "serializer/executable_spec.h"

namespace mlir::hexir {

struct BuildExecutableOptions {
  bool verifyPlan = true;         // check the plan with the planner's verifier
  bool schedule = true;           // memory-aware dispatch order
  bool inPlace = true;            // elementwise results overwrite dying inputs
  double planTimeLimit = 60.0;    // seconds for the exact packing search (a safety net)
  uint64_t planSearchNodes = 1000000;  // the deterministic budget that normally ends it
};

struct BuiltFunction {
  ::hexir::serializer::Function function;
  ::hexir::planner::PlanReport report;
};

// `entryIndex` maps kernel names to their entry index in kernel library 0 and `workgroups` to
// their workgroup counts; constants are added to `spec` (its pool and fills).
FailureOr<BuiltFunction> buildFunction(func::FuncOp graph, const llvm::StringMap<unsigned> &entryIndex,
                                       const llvm::StringMap<unsigned> &workgroups,
                                       ::hexir::serializer::ExecutableSpec &spec,
                                       const BuildExecutableOptions &options);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

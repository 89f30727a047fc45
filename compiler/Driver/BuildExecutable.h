//===- BuildExecutable.h - call_tir graph to an executable spec -*- C++ -*-===//
//
// The last compiler step before the writer: a graph function in call_tir form becomes a
// serializer::Function (signature, commands, slots), and its constants go to the pool.
//
// Memory is planned in four steps (compiler/Planning/), with the MLIR-free planner library:
//  1. BufferLiveness: schedule, graph outputs, and a planner::Problem of every other
//     dispatch result with its lifetime, in the target's memory spaces;
//  2. InPlaceSharing: results that may take over a dying input's buffer, outputs tied to
//     donated inputs (as the kernels allow, InPlaceAnalysis.h);
//  3. PlanMemory: planner::Solve, checked by the planner's verifier; the function's arenas;
//  4. EmitCommands: slots, constants and the command list.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H
#define HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "Planning/ConstantPool.h"
#include "Target/TargetBackend.h"

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

// The kernels the graph calls must be in `spec.libraries`; constants go through `pool` (of
// `spec`, shared by every function of the executable) into its pool and fills.
FailureOr<BuiltFunction> buildFunction(func::FuncOp graph, const TargetDescription &target,
                                       ::hexir::serializer::ExecutableSpec &spec, ConstantPool &pool,
                                       const BuildExecutableOptions &options);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

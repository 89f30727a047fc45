//===- PlanMemory.h - offsets for every buffer -------------------*- C++ -*-===//
//
// Step 3 of memory planning: packs the buffers of each memory space into one arena
// (planner::Solve), checks the packing with the planner's independent verifier, and records
// the arenas: one per memory space that holds any bytes, in the order of the spaces.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_PLANMEMORY_H
#define HEXIR_COMPILER_PLANNING_PLANMEMORY_H

#include "Planning/BufferLiveness.h"

#include "planner/plan.h"
#include "serializer/executable_spec.h"

namespace mlir::hexir {

struct PlanMemoryOptions {
  bool verify = true;                  // check the plan with the planner's verifier
  double timeLimit = 60.0;             // seconds for the exact packing search (a safety net)
  uint64_t searchNodes = 1000000;      // the deterministic budget that normally ends it
};

struct MemoryPlan {
  ::hexir::planner::Plan plan;                    // an offset per buffer of the problem
  std::vector<::hexir::serializer::Arena> arenas;  // the function's arenas
  SmallVector<int32_t> arenaOfSpace;              // memory space -> its arena, or -1
};

// Fills the report's arena, lower bound, method and buffer table.
FailureOr<MemoryPlan> planMemory(func::FuncOp graph, const BufferLiveness &live, const TargetDescription &target,
                                 const PlanMemoryOptions &options, ::hexir::planner::PlanReport &report);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_PLANMEMORY_H

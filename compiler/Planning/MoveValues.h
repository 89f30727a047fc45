//===- MoveValues.h - values moved out of a full memory space and back -*- C++ -*-===//
//
// Step 2b of memory planning (memory-space assignment, as XLA's): when the buffers of the arena's
// memory space cannot fit its capacity and the target can copy to another space and back (a
// machine file's transfers: an edge device's SRAM and DRAM), values are moved out for their
// longest idle interval, one at a time, until the planner fits the arena: the largest buffer
// live but unread at the peak step is copied to the other space after its last use before the
// peak and back before its next use (two copy commands the VM executes). Later readers read the
// copy. Each move is recorded in the report (what moved, when, the bytes and their transfer
// time by the machine's rates); what cannot fit even so is left to planMemory to explain.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_MOVEVALUES_H
#define HEXIR_COMPILER_PLANNING_MOVEVALUES_H

#include "Planning/PlanMemory.h"

namespace mlir::hexir {

// `constantBytes`: the constants' bytes, resident in the target's constant space.
void moveValuesToFit(BufferLiveness &live, const TargetDescription &target, uint64_t constantBytes,
                     const PlanMemoryOptions &options, ::hexir::planner::PlanReport &report);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_MOVEVALUES_H

//===- MoveValues.h - values moved out of a full memory space and back -*- C++ -*-===//
//
// Step 2b of memory planning (rematerialization and memory-space assignment, as XLA's): when
// the buffers of the arena's memory space cannot fit its capacity, values idle at the peak step
// are freed for their idle interval, one at a time, until the planner fits the arena. A value
// whose dispatch is elementwise over values still there when it is needed again may be
// recomputed (its dispatch runs again); with a machine file's transfers out of the arena's space
// and back (an edge device's SRAM and DRAM), a value may be moved (two copy commands the VM
// executes). Each candidate is priced in seconds by the machine's rates (the dispatch's
// roofline, or both transfers) and the cheapest per byte freed goes first. Later readers read
// the new copy. Each step is recorded in the report; what cannot fit even so is left to
// planMemory to explain.
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

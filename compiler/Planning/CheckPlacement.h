//===- CheckPlacement.h - every buffer a kernel touches is where it can -*- C++ -*-===//
//
// Between steps 1 and 2 of memory planning: the intermediates (the arena's space) and the
// constants (the constant space) must be in memory spaces the target's kernels address. The
// compiler puts them there by itself; `--place` can put them elsewhere (a GPU's host DRAM, say).
// Then the first dispatch that would read or write such a buffer is refused with the value, its
// space, the spaces the processor sees, and the transfer that would bring it there with its
// cost from the machine file (as Vx's E6003).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_CHECKPLACEMENT_H
#define HEXIR_COMPILER_PLANNING_CHECKPLACEMENT_H

#include "Planning/BufferLiveness.h"

namespace mlir::hexir {

// Fails also when a placement names such a space but nothing a kernel touches is there (the
// executable would still list a space the device may lack).
LogicalResult checkPlacement(func::FuncOp graph, const BufferLiveness &live, const TargetDescription &target);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_CHECKPLACEMENT_H

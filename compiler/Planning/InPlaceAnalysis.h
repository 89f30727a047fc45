//===- InPlaceAnalysis.h - which kernel outputs may overwrite inputs -*- C++ -*-===//
//
// A kernel may write result k into the buffer of input i in two cases:
//  - elementwise: its one compute op is a linalg op with only parallel loops, input i's
//    indexing map and result k's are the same identity map over tensors of the same type,
//    and result k's initial value is tensor.empty (nothing is written before each element is
//    read). Every element is then read before the same element is written, at the same index.
//    Not when the op reads another compute op's result (an epilogue fused after a matmul or
//    convolution): the kernel writes that result into the output before the epilogue runs.
//  - update: input i is result k's initial value (the init of a linalg op, the dest of
//    tensor.insert_slice) and is used nowhere else in the kernel. The kernel first copies it
//    into the result, element for element, then updates the result: over the same buffer the
//    copy is a no-op (a KV-cache update in place).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_INPLACEANALYSIS_H
#define HEXIR_COMPILER_PLANNING_INPLACEANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::hexir {

// For each result of `kernel`: the inputs it may be written into, in order of preference.
SmallVector<SmallVector<unsigned>> findInPlaceCandidates(func::FuncOp kernel);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_INPLACEANALYSIS_H

//===- InPlaceAnalysis.h - which kernel outputs may overwrite inputs -*- C++ -*-===//
//
// A kernel may write result k into the buffer of input i when it is elementwise between them:
// its one compute op is a linalg op with only parallel loops, input i's indexing map and
// result k's are the same identity map over tensors of the same type, and result k's initial
// value is tensor.empty (nothing is written before each element is read). Every element is
// then read before the same element is written, at the same index.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_INPLACEANALYSIS_H
#define HEXIR_COMPILER_DRIVER_INPLACEANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::hexir {

// For each result of `kernel`: the inputs it may be written into, in order of preference.
SmallVector<SmallVector<unsigned>> findInPlaceCandidates(func::FuncOp kernel);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_INPLACEANALYSIS_H

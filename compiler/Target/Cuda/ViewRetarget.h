//===- ViewRetarget.h - uses of a buffer moved to another of another layout -*- C++ -*-===//
//
// The CUDA outliner moves what a kernel reads and writes between buffers of the same shape
// and another layout (a thread's private tile for a view of a shared one; one slot of a
// double-buffered tile for the tile). Views of the old buffer are made again on the new one
// (their result types follow the new layout); every other user (loads, stores, linalg ops,
// copies) takes the new buffer as it is.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_VIEWRETARGET_H
#define HEXIR_COMPILER_TARGET_CUDA_VIEWRETARGET_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// `use` (of a memref) given `replacement`, a memref of the same shape.
void retargetUse(RewriterBase &rewriter, OpOperand &use, Value replacement);

// Every use of `view` given `replacement`.
void retargetUses(RewriterBase &rewriter, Value view, Value replacement);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_VIEWRETARGET_H

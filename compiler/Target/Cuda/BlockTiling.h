//===- BlockTiling.h - kernels tiled to thread blocks on tensors -*- C++ -*-===//
//
// What the CUDA passes that give a kernel thread blocks share (StageContractions: a matmul or
// convolution staging its input tiles in shared memory; SplitReductions: a reduction split
// across the threads of a block): the kernel shape they take, the block tiling, shared tensors,
// thread tiling, and the check that every op of a block ended up in a thread loop.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_BLOCKTILING_H
#define HEXIR_COMPILER_TARGET_CUDA_BLOCKTILING_H

#include "Transforms/Divisors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::hexir {

// A kernel whose one result is computed by one op with reduction loops, an elementwise
// initializer (whatever writes its accumulator first) and an elementwise epilogue over its
// result's shape: every op static, read once, the reduction's inputs bindings of the kernel.
struct ReductionKernel {
  linalg::LinalgOp reduction;
  linalg::LinalgOp root;  // the op computing the kernel's result: the reduction or the epilogue's last op
};
std::optional<ReductionKernel> matchReductionKernel(func::FuncOp fn);

// A tensor of `type` in the block's shared memory.
Value sharedTensor(OpBuilder &b, Location loc, RankedTensorType type);

// Tiles `root` to thread blocks (an scf.forall mapped to #gpu.block) of `rootTile` of its
// loops (0: whole), fusing every producer inside the kernel into the block.
FailureOr<scf::ForallOp> tileToBlocks(RewriterBase &rewriter, linalg::LinalgOp root, ArrayRef<int64_t> rootTile);

// Tiles `op` to threads of a block: an scf.forall mapped to #gpu.thread whose iterations take
// `sizes` of each loop (0: whole), fusing its linalg producers inside the block when `fuse`.
LogicalResult tileToThreads(RewriterBase &rewriter, TilingInterface op, ArrayRef<int64_t> sizes, bool fuse);
// One element per thread iteration of every parallel loop.
SmallVector<int64_t> elementTile(TilingInterface op);

// Erases the block-level ops the thread loops now compute themselves and checks that nothing
// but views and index computations is left outside them; marks the kernel staged.
LogicalResult finishBlocks(RewriterBase &rewriter, func::FuncOp fn, scf::ForallOp blocks);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_BLOCKTILING_H

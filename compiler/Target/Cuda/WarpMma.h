//===- WarpMma.h - hexir.warp_mma as tensor cores or as its dot products -*- C++ -*-===//
//
// hexir.warp_mma is one lane's share of a warp's 16x8x8 TF32 multiply-accumulate, its A and B
// elements given by regions that read shared memory (TensorCoreTiles.h makes them). It has two
// lowerings that compute the same thing:
//   - on a GPU (sm_80 and newer): the lane loads its fragment of A (4 elements) and of B (2)
//     in the mma.sync layout, rounds them to TF32 (cvt.rna.tf32.f32), and the warp runs one
//     `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (nvgpu.mma.sync);
//   - in the CUDA emulator, which runs one lane at a time: the lane's 4 outputs as the dot
//     products they are, over the 8 elements of their row of A and column of B, each rounded
//     to TF32 the same way. No lane needs another's registers, because A and B are in memory.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_WARPMMA_H
#define HEXIR_COMPILER_TARGET_CUDA_WARPMMA_H

#include "Dialect/HexirDialect.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// Replaces `op` with its fragment loads, TF32 conversions and one nvgpu.mma.sync.
void lowerWarpMmaToTensorCores(RewriterBase &rewriter, WarpMmaOp op);

// Replaces `op` with the lane's four dot products (the CUDA emulator's model of it).
void lowerWarpMmaToDotProducts(RewriterBase &rewriter, WarpMmaOp op);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_WARPMMA_H

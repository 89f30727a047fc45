//===- TensorCoreTiles.h - a staged contraction's steps on tensor cores -*- C++ -*-===//
//
// With --allow-tf32 on sm_80 and newer, a staged kernel (StageContractions) whose step is a
// matrix product in f32 accumulates with tensor cores instead of each thread's FMAs. "A
// matrix product" is read off the step's indexing maps, so convolutions qualify: its loops
// used by the first input and the output are M (a convolution's output pixels), by the second
// input and the output N (its output channels), by both inputs only K (kernel window and input
// channels); a loop of one iteration is none of them; anything else (a depthwise convolution's
// channel, used by all three) keeps the FMA path. The block's output tile is M x N, padded to
// 16 x 8 tiles, and K per step is padded to 8: padded rows and columns are clamped reads whose
// results are dropped, padded K reads zeros, so any block tile works.
//
// Each of the block's warps owns a grid of 16x8 tiles. Its lanes keep their fragments of
// them (4 elements a tile) in a private array (ThreadPrivate.h), loaded from the shared
// accumulator after the initializer and stored back to it before the epilogue, so the
// initializer, the epilogue and everything around them are unchanged. Each step's
// accumulation becomes, per 8 of K and per tile, one hexir.warp_mma reading the step's
// shared input tiles through the indexing maps (WarpMma.h lowers it).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_TENSORCORETILES_H
#define HEXIR_COMPILER_TARGET_CUDA_TENSORCORETILES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// Rewrites the step of staged block nest `blocks` (in `gfn`, bufferized, its thread foralls
// not yet mapped) to tensor-core tiles where it qualifies, with at most `maxWarps` warps.
// Returns whether it did.
bool useTensorCores(RewriterBase &rewriter, gpu::GPUFuncOp gfn, scf::ForallOp blocks, int64_t maxWarps);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_TENSORCORETILES_H

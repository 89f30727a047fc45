//===- DotGroups.h - int8 weights packed for VNNI dot products ----*- C++ -*-===//
//
// A VNNI dot product (vpdpbusd) multiplies four unsigned bytes by four signed bytes and adds
// the four products into one int32 lane. On a target that has it, the packing passes store
// constant int8 weights with groups of four consecutive reduction indices innermost, so one
// 32-bit lane of a panel row is what a lane multiplies. The activation is read as unsigned bytes
// (xq + 128, its sign bit flipped): a convolution's packing flips it and adds the constant
// correction -128 * sum(w) to the accumulator's initial value; MatMul and Gemm arrive in that
// form from the importer, their correction in the epilogue. The host kernel generator lowers the register tiles of these
// contractions to vpdpbusd (Target/Host/DotProducts.h); they stay exact int32 sums on any
// target.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H
#define HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// A contraction acc + zext(A[..., m, k]) * sext(B) with a constant int8 B[K][N] (or [N][K]), K a
// multiple of 4 (MatMul and Gemm of --int8-kernels): P[no][k4][ni][g] = B[4 * k4 + g][no * nr +
// ni], A viewed as [..., m, K/4, 4], loops (..., m, no, ni, ..., k4, ..., g), the result viewed
// as [..., M, N]. Failure (nothing changed) for any other op.
LogicalResult packMatmulDotGroups(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel);

// A channels-last int8 convolution (signed image and constant filter, int32 accumulator from a
// zero fill or a constant per-channel broadcast): the image's sign bits flipped (folded into its
// producer or padding where it can be), the initial value less 128 * sum(w) per channel, and the
// filter packed as P[p][kh][kw][c4][fi][g] = W[kh][kw][4 * c4 + g][p * nr + fi]. The convolution
// becomes a generic over (n, oh, ow, p, fi, kh, kw, c4, g) (a 1x1 convolution with stride 1: a
// contraction over (n, oh, ow, p, fi, c4, g)) reading the image as [N, H, W, C/4, 4]. Channels
// are padded to whole groups (3 -> 4: a zero weight) and output channels to whole vectors.
LogicalResult packConvDotGroups(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H

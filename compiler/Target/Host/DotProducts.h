//===- DotProducts.h - register tiles as int8 and bf16 dot products -*- C++ -*-===//
//
// A register tile of an int8 contraction or convolution tap over weights packed in groups of four
// (Transforms/DotGroups.h) is a vector.contract of zext(A) [rows x 4] and sext(B)
// [columns x 4] into int32 accumulators [rows x columns], reducing the group of four. With
// VNNI that is one vpdpbusd per row and vector of columns: the row's four bytes broadcast to
// every 32-bit lane (unsigned), the columns' groups of four (signed), four products summed
// into each lane. Without VNNI the contraction lowers as any other (widened, multiplied): the
// same exact int32 sums; over groups of two (the weights packed in pairs for such a target), it
// is one vpmaddwd (SSE2, AVX2, AVX512BW) on both operands widened to int16 and an add per row and
// vector of columns. A bf16 one (extf(A) x extf(B) into f32, groups of two) is one vdpbf16ps
// per row and vector of columns with AVX512-BF16.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_HOST_DOTPRODUCTS_H
#define HEXIR_COMPILER_TARGET_HOST_DOTPRODUCTS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// Rewrites such contractions into vpdpbusd on vectors of `int8Bits` (512: AVX512-VNNI, 256:
// AVX-VNNI; 0: none), without those int8 pairs into vpmaddwd on vectors of `pairBits` (512:
// AVX512BW, 256: AVX2, 128: SSE2; 0: none), and vdpbf16ps on vectors of `bf16Bits` (512: AVX512-BF16; 0:
// none) when their columns are a multiple of its 32-bit lanes.
void populateDotProductPatterns(RewritePatternSet &patterns, int64_t int8Bits, int64_t bf16Bits,
                                int64_t pairBits = 0);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_HOST_DOTPRODUCTS_H

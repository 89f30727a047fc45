//===- DotGroups.h - weights packed for int8 and bf16 dot products -*- C++ -*-===//
//
// A dot-product instruction multiplies a group of narrow values in each 32-bit lane and adds
// the products into the lane: VNNI's vpdpbusd four unsigned bytes by four signed bytes into
// int32, AVX512-BF16's vdpbf16ps two bf16 by two bf16 into f32. On a target that has it, the
// packing passes store constant weights of that type with groups of consecutive reduction
// indices innermost, so one 32-bit lane of a panel row is what a lane multiplies. A target
// without VNNI multiplies int8 pairs instead (AVX2's vpmaddwd on the bytes widened to int16,
// two exact products summed into each int32 lane; vpmaddubsw would saturate): int8 weights in
// groups of two.
//
// int8: the activation is read as unsigned bytes (xq + 128, its sign bit flipped): a
// convolution's packing flips it and adds the constant correction -128 * sum(w) to the
// accumulator's initial value; MatMul and Gemm arrive in that form from the importer, their
// correction in the epilogue. bf16 (--precision bf16, Transforms/ReducePrecision.cpp): the
// operands are bf16 tensors already. The host kernel generator lowers the register tiles of
// these contractions to dot products (Target/Host/DotProducts.h); on any other target they
// lower as any contraction, widened.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H
#define HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::hexir {

// The number of values of element type `t` in a dot-product group: `int8Group` for i8 (4 for
// VNNI, 2 for pairs, 0: none), 2 for bf16; none for any other type.
std::optional<int64_t> dotGroupSize(Type t, int64_t int8Group = 4);
// Whether `size` values of `t` make a group of some target: i8 in 4 or 2, bf16 in 2.
bool isDotGroupSize(Type t, int64_t size);

// What packMatmulDotGroups needs of a contraction before its types: one column loop n and one
// reduction k, a constant weight operand read as [k][n] or [n][k], the other operand with k
// innermost, the result with n innermost.
struct MatmulDotOperands {
  unsigned weights;  // the weights' input index (0 or 1)
  unsigned n, k;     // the column and reduction loops
};
std::optional<MatmulDotOperands> matmulDotOperands(linalg::GenericOp op);

// The body of a bf16 dot-group contraction: acc + extf(a) * extf(b) in f32.
void bf16DotBody(OpBuilder &b, Location l, ValueRange args);

// Whether packMatmulDotGroups and packConvDotGroups will pack `op` once its operands are bf16
// (ReducePrecision asks before it makes them so): the structure, a reduction of whole pairs
// (a convolution pads its channels), static shapes, and an initial value they can widen where
// the output columns are padded to whole panels.
bool bf16MatmulPackable(linalg::GenericOp op, int64_t maxPanel);
bool bf16ConvPackable(linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel);

// A contraction acc + zext(A[..., m, k]) * sext(B) in int32 with a constant int8 B[K][N] (or
// [N][K]) (MatMul and Gemm of --int8-kernels), or acc + extf(A) * extf(B) in f32 with bf16 A
// and B, K a multiple of the group size G (int8: `int8Group`): P[no][kg][ni][g] = B[G * kg + g][no * nr + ni], A
// viewed as [..., m, K/G, G], loops (..., m, no, ni, ..., kg, ..., g), the result viewed as
// [..., M, N]. An int8 B computed at run time (attention's products of two activations),
// its dimensions k, n and batch ones in any order, N a whole number of vectors (no padding
// columns), is packed the same way by an elementwise kernel before the contraction,
// P[batch...][no][kg][ni][g]. Failure (nothing changed) for any other op.
LogicalResult packMatmulDotGroups(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel,
                                  int64_t int8Group = 4);

// A channels-last int8 convolution (signed image and constant filter, int32 accumulator from a
// zero fill or a constant per-channel broadcast) or bf16 one (f32 accumulator from a zero fill
// or a constant bias): the filter packed as P[p][kh][kw][cg][fi][g] = W[kh][kw][G * cg + g][p *
// nr + fi]. The convolution becomes a generic over (n, oh, ow, p, fi, kh, kw, cg, g) (a 1x1
// convolution with stride 1: a contraction over (n, oh, ow, p, fi, cg, g)) reading the image as
// [N, H, W, C/G, G]. Channels are padded to whole groups (3 -> 4: a zero weight) and output
// channels to whole vectors. int8 only: the image's sign bits flipped (folded into its producer
// or padding where it can be), the initial value less 128 * sum(w) per channel.
LogicalResult packConvDotGroups(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel,
                                int64_t int8Group = 4);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_DOTGROUPS_H

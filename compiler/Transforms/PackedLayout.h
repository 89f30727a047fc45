//===- PackedLayout.h - panels of a packed output dimension ---*- C++ -*-===//
//
// Shared by the passes that store weights packed (PackMatmulWeights, PackConvFilters): the
// output's last dimension N is split into panels [N / nr][nr], the width nr that a register
// tile reads contiguously.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_PACKEDLAYOUT_H
#define HEXIR_COMPILER_TRANSFORMS_PACKEDLAYOUT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <utility>
#include <vector>

namespace mlir::hexir {

// The panel width for an output dimension of extent n: 32, 16 or 8, the first that divides n
// and is at most `widest` (the target's register tile: two vectors); 0 when none does (the op
// stays unpacked).
int64_t panelWidth(int64_t n, int64_t widest);

// Reassociation that splits the last of `rank` dimensions in two.
SmallVector<ReassociationIndices> splitLastDim(int64_t rank);

// The elementwise op computing `init` from one input into tensor.empty (a bias spread over an
// accumulator), or null.
linalg::GenericOp initBroadcast(Value init);

// An accumulator's initial value with its last dimension split into [n / nr][nr]: a zero fill
// or a bias broadcast is rebuilt in that shape (so that dispatch formation still recomputes it
// inside the kernel), anything else is viewed.
Value packedInit(OpBuilder &b, Location loc, Value init, int64_t nr);

// The accumulator's initial value widened from F to `paddedF` channels (its last dimension),
// the new channels zero: a zero fill, or a broadcast of a constant f32 bias (padded with
// zeros). Null if it is anything else.
Value padChannels(RewriterBase &rewriter, Location loc, Value init, int64_t paddedF);
// Whether padChannels would widen `init` (asks without building anything).
bool canPadChannels(Value init);

// The column loop n and the reduction loop k of a contraction on tensors with one of each.
std::optional<std::pair<unsigned, unsigned>> columnAndReduction(linalg::GenericOp op);

// A copy of `in` into a new tensor of `shape`, by an elementwise op reading through `read` and
// writing through `write` (a permutation: the run-time packings and transposes of B).
Value permutedCopy(RewriterBase &rewriter, Location loc, Value in, ArrayRef<int64_t> shape, AffineMap read,
                   AffineMap write);

// The values of an f32 constant, read from its raw storage (a splat is expanded).
std::vector<float> denseFloats(DenseElementsAttr values);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_PACKEDLAYOUT_H

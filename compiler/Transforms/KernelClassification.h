//===- KernelClassification.h - what kind of kernel an op roots -*- C++ -*-===//
//
// Facts about ops that every target's kernels and dispatch formation share, before any tile
// size: which kind of kernel a compute op roots (contractions, channels-last convolutions,
// depthwise convolutions and poolings, elementwise ops, reductions over outer dimensions: the
// ops that carry nearly all of a network's work), the run-time packing of a matmul's B,
// initializers, packed convolutions, and window borders a kernel computes itself. Tile sizes
// are each target's (Target/Host/TileStrategy.h, Target/Cuda/BlockTiling.h).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_KERNELCLASSIFICATION_H
#define HEXIR_COMPILER_TRANSFORMS_KERNELCLASSIFICATION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

namespace mlir::hexir {

enum class KernelKind { Contraction, Conv, Depthwise, Pooling, Elementwise, Reduction };

// The kind of kernel `op` roots: a single-result op on static tensors of one of the kinds above
// (a contraction with one reduction loop and one or two column loops; a named or packed
// channels-last convolution; a depthwise convolution; a max or sum pooling; a generic of arith
// and math ops reading through projected permutations, elementwise writing in loop order, or
// reducing outer dimensions that every input reads along the output's innermost one); none
// for anything else.
std::optional<KernelKind> classifyKernel(linalg::LinalgOp op);

// The dot-product loop of an int8 or bf16 contraction over weights packed in groups along the
// reduction (PackMatmulWeights, DotGroups.h): its second reduction loop, innermost in every
// input, of extent 4 reading 8-bit integers or 2 reading bf16. One step of it is one 32-bit
// lane of a dot product (vpdpbusd: four u8 x s8 products summed into each int32 lane;
// vdpbf16ps: two bf16 products into each f32 lane).
std::optional<unsigned> dotGroupLoop(linalg::LinalgOp op);
// The same for a packed convolution over (n, oh, ow, p, fi, kh, kw, cg, g): its loop g.
std::optional<unsigned> dotGroupConvLoop(linalg::LinalgOp op);

// Whether `insert` writes a static box of its destination (static shapes and offsets, unit
// strides, no rank change): a slice a kernel can compute its result into (dispatch formation
// fuses the producer into the write, the host tiler computes it in the slice).
inline bool isStaticSliceWrite(tensor::InsertSliceOp insert) {
  return insert.getSourceType().hasStaticShape() && insert.getDestType().hasStaticShape() &&
         insert.getSourceType().getRank() == insert.getDestType().getRank() && insert.hasUnitStride() &&
         !ShapedType::isDynamicShape(insert.getStaticOffsets());
}

// Whether every indexing map of `op` is linear in its loops: no floordiv, ceildiv or mod. Every
// tiler (MLIR's and this project's) sizes a tile's slice as map(tile - 1) + 1, which is right
// only for linear maps; a grouped convolution written with `oc floordiv (F/G)` reads the wrong
// channels whenever a tile starts inside a group. Input verification refuses other maps, and
// dispatch formation checks it again (KernelClassification.cpp).
bool hasLinearIndexingMaps(linalg::LinalgOp op);

// Ops that only initialize an accumulator: a fill, a copy, or an elementwise op with an empty
// init (a broadcast bias).
bool isInitializer(Operation &op);
// A tensor.empty, or a collapsed view of one (a kernel's collapsed rows, see collapsibleRows).
bool isEmptyTensor(Value v);
// A run-time packing of a matmul's B into panels (PackMatmulWeights): a copy of three loops
// through permutations into tensor.empty, read only by contractions over panels (two column
// loops) as an input. Dispatch formation puts it into its readers' kernels.
bool isPanelPack(Operation *op);
// Whether dispatch formation puts the panel packing `op` into its readers' kernels: where each
// reads the panels with at most `maxRows` rows (the target's
// TargetDescription::maxRowsPackedInKernel; 0: never).
bool packsPanelsInKernel(Operation *op, int64_t maxRows);
// The panel packing that the panels `op` (a contraction or a tile of one) reads come from
// inside its kernel, through slices; null when they come from outside.
linalg::GenericOp panelPackOf(linalg::LinalgOp op);
// A convolution with a packed filter (PackConvFilters, with or without int8 dot-product groups),
// as convolution dimensions (with groups: input channels {c4, g}).
std::optional<linalg::ConvolutionDimensions> packedConvDims(linalg::LinalgOp op);
// Output positions [start, start + size) of one spatial dimension of a window op whose windows
// all have the taps [tapStart, tapStart + taps) inside the unpadded input.
struct WindowSegment {
  int64_t start, size, tapStart, taps;
};
// The output positions [0, out) of a window of `window` taps (stride, dilation) over an input
// of `in` positions padded by `low` in front, grouped into segments of equal taps in order: a
// 3x3 window with padding 1 gives the first position (taps 1-2), the interior (all three) and
// the last (taps 0-1). Empty when some window has no tap inside the input.
SmallVector<WindowSegment> windowSegments(int64_t out, int64_t in, int64_t low, int64_t stride, int64_t dilation,
                                          int64_t window);
// The pad that a channels-last depthwise convolution or pooling `op` reads, if its kernel can
// compute the border itself from the unpadded tensor (each border output over the taps inside
// it; no padded tensor exists): a static pad of the spatial dimensions only, read only by `op`,
// by the window's identity (zero for a depthwise convolution or a sum, -inf or the lowest
// float for a max), every window keeping a tap inside, and `op` a kernel of its kind.
tensor::PadOp borderPad(linalg::LinalgOp op);
// Whether every loop of `op` is parallel (an elementwise op, a copy); false for a null op.
inline bool allParallel(linalg::LinalgOp op) { return op && op.getNumParallelLoops() == op.getNumLoops(); }
// Whether the kernel `root` roots can narrow its register tiles in an epilogue of another
// element type (on targets with narrowing epilogues): a contraction or convolution, or a
// depthwise convolution or pooling that reads its input whole (one computing its border from
// the unpadded tensor, see borderPad, runs its own tiles).
bool narrowsInRegisters(linalg::LinalgOp root);
// The strides and dilations of a named convolution or pooling (1 where it has none).
SmallVector<int64_t> windowStrides(linalg::LinalgOp op);
SmallVector<int64_t> windowDilations(linalg::LinalgOp op);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_KERNELCLASSIFICATION_H

//===- KernelTiling.h - the tiling steps of hexir-tile-and-vectorize -*- C++ -*-===//
//
// The rewrites TileAndVectorize.cpp strings together for one kernel (the choice of tiles is
// TileStrategy.cpp's): tiling an op and replacing it, the workgroup loop that runs
// a chunk's writers one after the other, a pad written in place around its producer's result,
// a pad-only kernel split into rows, and a packed convolution's register tile as the named
// convolution the vectorizer takes.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_HOST_KERNELTILING_H
#define HEXIR_COMPILER_TARGET_HOST_KERNELTILING_H

#include "Dialect/HexirDialect.h"
#include "Target/Host/TileStrategy.h"
#include "Transforms/RowKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::hexir {

// Tiles `op` with `sizes` (0: not tiled) and replaces it; returns the tiled op and the loops,
// nested in the order of `interchange` (a permutation of the op's loops; empty: loop order).
FailureOr<scf::SCFTilingResult> tileOp(RewriterBase &rewriter, Operation *op, ArrayRef<int64_t> sizes,
                                       ArrayRef<int64_t> interchange = {});

// Register tiles of `op` (`registers`, 0 or a full extent: not tiled; loops nested in the order
// of `interchange`): when its rows are better peeled (splitRowTiles: 128 rows in 14-row tiles
// and 2 more, a 111-column image in 14-column tiles and 13 more), the whole tiles and the rest
// as two ops, each with the register tile of its own extents. Returns the tiles.
FailureOr<SmallVector<Operation *>> tileForRegisters(RewriterBase &rewriter, linalg::LinalgOp op,
                                                     ArrayRef<int64_t> registers, ArrayRef<int64_t> interchange,
                                                     int64_t lanes);

// A tile of a row kernel's op, with the register tile sizes it gets (0: not tiled) before it
// is vectorized.
struct RowTile {
  Operation *op;
  SmallVector<int64_t> registers;
};

// Splits the row kernel `k` into workgroups: one loop over workgroups [begin, end), each a
// chunk of rows of its longest row dimension on which every op runs in program order. Full-shape
// ops write the output's chunk in place; per-row values go to stack buffers of the chunk's rows;
// reductions become partial sums up to four vectors wide (the fixed order of a row's sum does
// not depend on the thread count) and their combination. Appends the tiles left to register-tile
// and vectorize; returns the number of workgroups (RowKernelTiling.cpp).
FailureOr<int64_t> tileRowKernel(RewriterBase &rewriter, RowKernel &k, Value begin, Value end, int64_t lanes,
                                 int64_t minWork, int64_t maxWorkgroups, SmallVectorImpl<RowTile> &tiles);

// `op` (elementwise, its accumulator unused) rewritten in destination-passing style on `value`:
// what it read of `value` it reads from its accumulator, which is `value`, so it updates it in
// place. `value` must have the type of op's result and be read element for element.
linalg::GenericOp inPlaceOn(RewriterBase &rewriter, linalg::GenericOp op, Value value);

// A register tile of a packed convolution (one panel) as the named convolution it is.
void toNamedConv(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> dilations);

// A register tile of a packed int8 convolution over dot-product groups (loops (n, oh, ow, p, fi,
// kh, kw, c4, g), one tap: kh and kw of one index) as the contraction it is: the image's window
// rows are a strided view (stride sh, sw) read through (n, oh, ow, c4, g), which the vectorizer
// takes as a contraction (a named convolution cannot express the groups). Returns false, with
// nothing changed, for a tile of more than one tap.
bool windowTileAsContraction(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> strides);

// A kernel that only pads is split into workgroups of rows of its result (at most
// `maxWorkgroups`, at least `minWork` elements each). Kernels of another shape are unchanged.
LogicalResult splitPad(func::FuncOp fn, int64_t minWork, int64_t maxWorkgroups);
// A kernel that only concatenates is split the same way, into chunks of its outermost other
// dimension. Kernels of another shape are unchanged.
LogicalResult splitConcat(func::FuncOp fn, int64_t minWork, int64_t maxWorkgroups);

// Whether a kernel's writers (initializers, root, epilogue, in order) end in a narrowing
// epilogue: one that reads the root's result and writes the output in another element type
// (int32 accumulators requantized to int8), the others all writing the root's type. False where
// all write one type; none where the writers are of another form.
std::optional<bool> narrowingChain(ArrayRef<linalg::LinalgOp> writers);
// The tensor the writers' chain updates: the first writer's destination, or the narrowing
// epilogue's (the kernel's output).
Value chainDestination(ArrayRef<linalg::LinalgOp> writers);

// The workgroup loop over this invocation's chunks of the output: every writer computes its
// tile of the chunk, in order. Replaces `writers` by their tiles in `tiled`. With `base`, the
// chunks are the kernel's workgroups [base, base + chunks) (one part of several, see
// splitRowRemainder); the loop then runs the invocation's range within them.
LogicalResult workgroupLoop(RewriterBase &rewriter, SmallVector<linalg::LinalgOp> writers,
                            ArrayRef<WorkgroupSplit> splits, WorkgroupRangeOp range,
                            SmallVector<linalg::LinalgOp> &tiled, std::optional<int64_t> base = std::nullopt);

// The writers' tiles of one chunk (see workgroupLoop) computed block by block: loops over the
// output dimensions in `order` whose block (`blocks`, 0: whole) is below their extent, and in
// each block every writer's tile in turn, so a register tile's bias, reduction and activation
// follow each other on the same accumulators. Replaces `writers` by their tiles in `tiled`.
LogicalResult blockLoops(RewriterBase &rewriter, SmallVector<linalg::LinalgOp> writers, ArrayRef<int64_t> blocks,
                         ArrayRef<unsigned> order, SmallVector<linalg::LinalgOp> &tiled);

// The writers of a kernel's output (every linalg op of `root`'s result type: initializers,
// root, epilogue) on the output with the output dimensions of `root`'s loops `rows`
// (consecutive, see collapsibleRows) collapsed into one: each op on collapsed views of its
// operands, its result expanded back (folded away between consecutive writers). False (and
// nothing changed) where some writer does not read the rows contiguously; failure if the
// rewrite broke off.
FailureOr<bool> collapseRows(RewriterBase &rewriter, func::FuncOp fn, linalg::LinalgOp root, ArrayRef<int64_t> rows);

// The writers of a kernel's output (initializers, root, epilogue: one output type) as two
// parts along output dimension `dim`, [0, split) and [split, extent), each a chain of the
// writers' tiles onto that part of the output, in `parts` (the originals are replaced).
LogicalResult splitWriters(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> writers, unsigned dim, int64_t split,
                           SmallVectorImpl<SmallVector<linalg::LinalgOp>> &parts);

// `writer`'s tile computing the chunk [offsets, offsets + sizes) of its output onto `current`.
FailureOr<linalg::LinalgOp> tileOnChunk(RewriterBase &rewriter, linalg::LinalgOp writer, ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes, Value current);

// A depthwise convolution or pooling (`writers[rootIndex]`, between its initializers and its
// epilogue) that reads `pad` (see borderPad) computed from the unpadded tensor: workgroups of
// output rows (each border segment one, the interior in chunks) or of channels, in each the
// window over each segment of taps inside the input, register-tiled with the initializers and
// the epilogue in each register tile. Returns the number of workgroups (WindowBorders.cpp).
FailureOr<int64_t> tileWindowWithBorders(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> writers, unsigned rootIndex,
                                         tensor::PadOp pad, WorkgroupRangeOp range, int64_t lanes, int64_t minWork,
                                         int64_t maxWorkgroups);

// Packs the panels of B that `op` (a contraction's cache block, or a tile of one, whose B
// is packed inside its kernel: panelPackOf) reads where it reads them: the packing tiled to
// that block, moved out of the loops the block does not depend on, written into a stack buffer
// of the block's size (one for the kernel). Returns the tiled packing; null if `op` reads no
// panels packed in its kernel.
FailureOr<linalg::GenericOp> packPanelsInPlace(RewriterBase &rewriter, linalg::LinalgOp op);

// The root's result written in place into the padded tensor: workgroup `begin` == 0 fills the
// border (its fills are appended to `fills`). Returns the interior.
Value padInPlace(RewriterBase &rewriter, tensor::PadOp pad, Value begin, SmallVectorImpl<linalg::FillOp> &fills);

// The root's result written in place into the slice `insert` writes of its destination: an
// argument destination is copied around the slice by workgroup `begin` == 0. Returns the slice.
Value sliceInPlace(RewriterBase &rewriter, tensor::InsertSliceOp insert, Value begin);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_HOST_KERNELTILING_H

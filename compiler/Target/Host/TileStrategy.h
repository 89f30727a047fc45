//===- TileStrategy.h - the host's register, cache and workgroup tiles -*- C++ -*-===//
//
// How a vectorizing target tiles the root op of a kernel, chosen from the op alone: the kinds
// of compute op that carry nearly all of a network's work (contractions, channels-last
// convolutions, depthwise convolutions and poolings, elementwise ops, reductions over outer
// dimensions), their register tile for vectors of `lanes` elements, their cache blocks and the
// split of the output into workgroups. The host target answers dispatch formation's question
// which ops root a kernel that fuses (HostTarget::fusesIntoKernel) from it; the host kernel
// pipeline (TileAndVectorize.cpp) applies it.
//
// Tile sizes divide the shapes exactly (the largest divisor up to the preferred size), so every
// tile is static and vectorizes without masks; rows that only small tiles divide are peeled
// into whole best tiles and the rest (splitRowTiles).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_HOST_TILESTRATEGY_H
#define HEXIR_COMPILER_TARGET_HOST_TILESTRATEGY_H

#include "Transforms/Divisors.h"
#include "Transforms/KernelClassification.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <optional>

namespace mlir::hexir {

// f32 lanes of a vector register of `vectorBits` (SSE's 4 at least): what every tile size
// below is counted in.
inline int64_t f32Lanes(int64_t vectorBits) { return std::max<int64_t>(vectorBits / 32, 4); }

// The widest panel constant weights are packed into (PackMatmulWeights, PackConvFilters): the
// register tile's two vectors of columns.
inline int64_t widestPanel(int64_t vectorBits) { return 2 * f32Lanes(vectorBits); }

// What the tiling of one root op looks like; every vector is indexed by the op's loops.
struct KernelStrategy {
  KernelKind kind;
  int64_t lanes = 0;              // f32 lanes of the target's vectors
  SmallVector<int64_t> ranges;    // static loop ranges
  SmallVector<int64_t> registers; // register tile (0: not tiled)
  SmallVector<int64_t> cache;     // cache tile (0: not tiled), contractions only
  SmallVector<int64_t> cacheOrder;    // nesting of the cache blocks' loops (empty: loop order)
  SmallVector<int64_t> registerOrder; // nesting of the register tiles' loops (empty: loop order)
  linalg::ContractionDimensions dims;  // contractions only: their batch, m, n and k loops
  // Convolutions: the input channel loop; packed filters (PackConvFilters): strides and
  // dilations of the generic op, which becomes a named convolution once tiled to one panel.
  unsigned channelLoop = 6;
  bool packedFilter = false;
  // A packed int8 or bf16 convolution over dot-product groups (DotGroups.h): its register tiles become
  // contractions over strided views of the image (windowTileAsContraction), not named
  // convolutions.
  bool dotGroups = false;
  // Its int8 products are in pairs (vpmaddwd, a target without VNNI): each row's pair is
  // widened after its broadcast, so a row costs about what a vector of columns does.
  bool int8Pairs = false;
  SmallVector<int64_t> strides, dilations;
  // Contractions over panels whose B is packed inside the kernel (panelPackOf): each cache
  // block of B is packed once, where the block is reached, and then serves every row.
  bool packsB = false;
};

// One split of the output into workgroups: output dimension `outDim` in chunks of `chunk`
// elements, `count` chunks.
struct WorkgroupSplit {
  unsigned outDim;
  int64_t chunk;
  int64_t count;
};

// Where the row loop (a contraction's rows, a convolution's output columns) of an op with
// strategy `s` is split in two, when the extent's divisors allow only smaller register tiles
// than the registers hold (127 tokens: 1 row of 2 vectors, not 14; 128: 8; 111 columns: 3)
// and the parts cost less by a simple model of tile overheads: [0, split), a whole number of
// the best tiles, and the rest. `poor`: the divisors' tile has at most half the accumulators, or
// (int8 pairs) the parts cost under 0.9 of it.
struct RowTileSplit {
  unsigned loop;
  int64_t split;
  bool poor;
};
std::optional<RowTileSplit> splitRowTiles(const KernelStrategy &s, int64_t lanes);
// The same for a whole kernel (every writer of its output, see splitWriters), as output
// dimension `outDim`: where the divisors' tile is poor, or the weights (read once per part)
// fit L2; other splits are left to the cache blocks.
struct RowRemainder {
  unsigned outDim;
  int64_t split;
};
std::optional<RowRemainder> rowRemainder(linalg::LinalgOp root, const KernelStrategy &s, int64_t lanes);

// A convolution's input channels run in blocks of at most this many (TileAndVectorize): 64
// with AVX-512 (a 3x3 block of a 32-wide panel: 72 KiB, in L2), 32 with narrower vectors,
// whose 16-wide panels then keep a 3x3 block in 18 KiB, inside a 32 KiB L1 (a Zen 3's 7x7 and
// 14x14 layers of resnet50 ran 5-20% faster than with 36 KiB blocks of 64 channels).
inline int64_t convChannelBlock(int64_t lanes) { return lanes >= 16 ? 64 : 32; }

// Blocks of a kernel's output in which its initializers (a bias, a zero fill) and its
// epilogue (an activation, a residual add) run together with its root, one block after the
// other (see blockLoops), for `root` the root's tile of one workgroup chunk: the register tile,
// where every reduction loop of the root stays inside it (the accumulators then start from the
// bias and take the activation in registers, and the output is written once), else the cache
// block of a contraction whose reduction is split into blocks (the bias and the activation then
// read and write a block in L1, not a whole chunk in L2). None for a convolution over more
// input channels than a cache block (they run chunk by chunk). A `narrowing` chain (its
// epilogue writes another element type, see narrowingChain) always gets register blocks: its
// whole reduction runs inside each register tile (cache blocks of the reduction or of input
// channels nested inside it, the accumulators kept in a stack tile between them), so the wide
// values exist one register tile at a time. `blocks`: per output dimension, 0 for whole;
// `order`: the output dimensions' loops, outermost first.
struct FusedBlocks {
  SmallVector<int64_t> blocks;
  SmallVector<unsigned> order;
  bool registers;
};
std::optional<FusedBlocks> fusedBlocks(linalg::LinalgOp root, const KernelStrategy &s, int64_t lanes,
                                       bool narrowing = false);

// The row loops of a contraction that are better walked as one (a 1x1 convolution's output
// rows and columns, [oh, ow]): consecutive row loops, each of more than one index, ending at
// the register tile's row loop, when that loop is shorter than the best register tile (a 7x7
// image: 7-row tiles of 14 accumulators, where its 49 pixels take 3 tiles of 14 rows and 7
// more; squeezenet's 13x13 classifier: 13 rows, where 169 take 28-row tiles). Every operand
// must read them contiguously. Empty when they stay apart.
SmallVector<int64_t> collapsibleRows(linalg::LinalgOp op, const KernelStrategy &s, int64_t lanes);

// The register tile of `op` for vectors of `lanes` elements; none for an op of another kind.
std::optional<KernelStrategy> chooseStrategy(linalg::LinalgOp op, int64_t lanes);
// Cache blocks of a contraction inside one workgroup tile of shape `ranges`.
void chooseCacheTiles(KernelStrategy &s, ArrayRef<int64_t> ranges);
// Workgroups over the output dimensions (indexed through `outMap`), at most about `wanted`.
SmallVector<WorkgroupSplit> chooseSplits(linalg::LinalgOp root, const KernelStrategy &strategy, AffineMap outMap,
                                         int64_t wanted);
// Where B is packed in the kernel, each cache block packs kPackedRowBytes of each of its rows
// of B (a few panels side by side: 64 bytes of one panel per row packed no faster than a
// packing kernel) into a stack buffer of at most kPackedBlockBytes, shared by all its blocks.
constexpr int64_t kPackedRowBytes = 256, kPackedBlockBytes = 48 * 1024;
// Register tiles of an op that only initializes its output: rows of the innermost dimension.
SmallVector<int64_t> elementwiseRegisterTiles(ArrayRef<int64_t> ranges, int64_t lanes);
// The register tile of a vectorized innermost dimension of `extent` elements: rows up to four
// vectors of `lanes` long, a divisor of the extent.
int64_t rowTile(int64_t extent, int64_t lanes);
// A lane-friendly tile for an extent `n`: the first of `preferred` dividing it.
int64_t vectorTile(int64_t n, ArrayRef<int64_t> preferred);

// The row loop of a contraction's register tile (its longest m loop).
std::optional<unsigned> rowLoop(const linalg::ContractionDimensions &dims, ArrayRef<int64_t> ranges);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_HOST_TILESTRATEGY_H

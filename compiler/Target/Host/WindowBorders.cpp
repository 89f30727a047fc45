//===- WindowBorders.cpp - depthwise convolutions and poolings without padded tensors ----===//
//
// A depthwise convolution or pooling reading a pad (dispatch formation puts the pad into its
// kernel, see borderPad) never materializes the padded tensor: the output is split into
// segments per spatial dimension whose windows all have the same taps inside the input (a 3x3
// window with padding 1: the first row, the interior, the last row; the same for columns), and
// each pair of segments is the same named op over the unpadded input's slice with the filter's
// (or window's) slice of those taps. Padding by the window's identity contributes nothing, so
// the result is the padded op's: mobilenet_v2's largest expanded activation (112x112x96)
// stays 4.8 MB instead of becoming a 4.9 MB padded copy, and resnet18's first pooling reads
// the convolution's 3.2 MB result in place.
//
// Workgroups are rows of the output (each border segment one, the interior in chunks) or,
// when there are few rows, chunks of channels. Every region is then register-tiled like the
// whole op would be, with the kernel's initializers and epilogue (a bias, a ReLU6 or SiLU) in
// each register tile; the decomposition into 1-D windows and the vectorizer follow in
// TileAndVectorize.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/KernelTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// The rows of one workgroup's chunk: [row, row + rows) of output segment `segment` (in the
// chunk's H segments), with the taps of that segment.
struct RowPiece {
  Value row;  // absolute output row
  int64_t rows;
  WindowSegment taps;
};

struct WindowOp {
  linalg::LinalgOp root;
  Operation *rootOp;
  Value input, window;  // unpadded input; filter (depthwise) or window shape (pooling)
  RankedTensorType outType;
  SmallVector<int64_t> low, strides, dilations;
  SmallVector<WindowSegment> widths;
};

Value index(RewriterBase &rewriter, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(rewriter, loc, v);
}

// The writers over output rows `piece`, columns `cols`, channels [channel, channel +
// channels) of the chunk `current` (output rows from `chunkRow`), onto that part of it: the
// initializers' and the epilogue's tiles of the region around the window op over the
// unpadded input's slice. Returns the updated chunk and appends the region's writers to
// `groups` (the window op at `rootIndex`).
FailureOr<Value> emitRegion(RewriterBase &rewriter, Location loc, const WindowOp &w, ArrayRef<linalg::LinalgOp> writers,
                            unsigned rootIndex, Value current, Value chunkRow, const RowPiece &piece,
                            const WindowSegment &cols, Value channel, int64_t channels,
                            SmallVectorImpl<SmallVector<linalg::LinalgOp>> &groups) {
  int64_t n = w.outType.getDimSize(0);
  auto attr = [&](int64_t v) -> OpFoldResult { return rewriter.getIndexAttr(v); };
  // Input rows from piece.row * stride + tapStart * dilation - low.
  Value inRow = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, piece.row, index(rewriter, loc, w.strides[0])),
      index(rewriter, loc, piece.taps.tapStart * w.dilations[0] - w.low[0]));
  int64_t inRows = (piece.rows - 1) * w.strides[0] + (piece.taps.taps - 1) * w.dilations[0] + 1;
  int64_t inCol = cols.start * w.strides[1] + cols.tapStart * w.dilations[1] - w.low[1];
  int64_t inCols = (cols.size - 1) * w.strides[1] + (cols.taps - 1) * w.dilations[1] + 1;
  SmallVector<OpFoldResult> ones4(4, attr(1));
  Value in = tensor::ExtractSliceOp::create(rewriter, loc, w.input,
                                            ArrayRef<OpFoldResult>{attr(0), inRow, attr(inCol), channel},
                                            ArrayRef<OpFoldResult>{attr(n), attr(inRows), attr(inCols), attr(channels)},
                                            ones4);
  Value window;
  auto windowType = cast<RankedTensorType>(w.window.getType());
  if (windowType.getRank() == 3) {  // a depthwise filter [kh, kw, c]
    window = tensor::ExtractSliceOp::create(
        rewriter, loc, w.window, ArrayRef<OpFoldResult>{attr(piece.taps.tapStart), attr(cols.tapStart), channel},
        ArrayRef<OpFoldResult>{attr(piece.taps.taps), attr(cols.taps), attr(channels)},
        SmallVector<OpFoldResult>(3, attr(1)));
  } else {  // a pooling window: only its shape matters
    window = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{piece.taps.taps, cols.taps},
                                     windowType.getElementType());
  }
  Value outRow = arith::SubIOp::create(rewriter, loc, piece.row, chunkRow);
  SmallVector<OpFoldResult> offsets = {attr(0), outRow, attr(cols.start), attr(0)};
  SmallVector<OpFoldResult> sizes = {attr(n), attr(piece.rows), attr(cols.size), attr(channels)};
  // The region in the output's coordinates, for the other writers' tiles.
  SmallVector<OpFoldResult> absolute = {attr(0), piece.row, attr(cols.start), channel};
  Value out = tensor::ExtractSliceOp::create(rewriter, loc, current, offsets, sizes, ones4);
  SmallVector<linalg::LinalgOp> &group = groups.emplace_back();
  for (auto [i, writer] : llvm::enumerate(writers)) {
    if (i == rootIndex) {
      group.push_back(cast<linalg::LinalgOp>(clone(rewriter, w.rootOp, TypeRange{out.getType()},
                                                   ValueRange{in, window, out})));
    } else {
      FailureOr<linalg::LinalgOp> tiled = tileOnChunk(rewriter, writer, absolute, sizes, out);
      if (failed(tiled))
        return failure();
      group.push_back(*tiled);
    }
    out = group.back()->getResult(0);
  }
  return tensor::InsertSliceOp::create(rewriter, loc, out, current, offsets, sizes, ones4).getResult();
}

// One workgroup's chunk of the output: rows [chunkRow, chunkRow + chunkRows) (the pieces),
// channels [channel, channel + channels), region by region (emitRegion). Returns the updated
// output.
Value emitChunk(RewriterBase &rewriter, Location loc, const WindowOp &w, ArrayRef<linalg::LinalgOp> writers,
                unsigned rootIndex, Value dest, Value chunkRow, int64_t chunkRows, ArrayRef<RowPiece> pieces,
                Value channel, int64_t channels, SmallVectorImpl<SmallVector<linalg::LinalgOp>> &groups,
                LogicalResult &status) {
  auto attr = [&](int64_t v) -> OpFoldResult { return rewriter.getIndexAttr(v); };
  SmallVector<OpFoldResult> offsets = {attr(0), chunkRow, attr(0), channel};
  SmallVector<OpFoldResult> sizes = {attr(w.outType.getDimSize(0)), attr(chunkRows), attr(w.outType.getDimSize(2)),
                                     attr(channels)};
  SmallVector<OpFoldResult> ones4(4, attr(1));
  Value current = tensor::ExtractSliceOp::create(rewriter, loc, dest, offsets, sizes, ones4);
  for (const RowPiece &piece : pieces)
    for (const WindowSegment &cols : w.widths) {
      FailureOr<Value> updated =
          emitRegion(rewriter, loc, w, writers, rootIndex, current, chunkRow, piece, cols, channel, channels, groups);
      if (failed(updated)) {
        status = failure();
        return dest;
      }
      current = *updated;
    }
  return tensor::InsertSliceOp::create(rewriter, loc, current, dest, offsets, sizes, ones4);
}

} // namespace

FailureOr<int64_t> mlir::hexir::tileWindowWithBorders(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> writers,
                                                      unsigned rootIndex, tensor::PadOp pad, WorkgroupRangeOp range,
                                                      int64_t lanes, int64_t minWork, int64_t maxWorkgroups) {
  WindowOp w;
  w.root = writers[rootIndex];
  w.rootOp = w.root.getOperation();
  Location loc = w.root.getLoc();
  w.input = pad.getSource();
  w.window = w.root.getDpsInputs()[1];
  w.outType = cast<RankedTensorType>(w.root->getResult(0).getType());
  w.strides = windowStrides(w.root);
  w.dilations = windowDilations(w.root);
  w.low = {pad.getStaticLow()[1], pad.getStaticLow()[2]};
  auto windowType = cast<RankedTensorType>(w.window.getType());
  ArrayRef<int64_t> in = pad.getSourceType().getShape(), out = w.outType.getShape();
  SmallVector<WindowSegment> heights =
      windowSegments(out[1], in[1], w.low[0], w.strides[0], w.dilations[0], windowType.getDimSize(0));
  w.widths = windowSegments(out[2], in[2], w.low[1], w.strides[1], w.dilations[1], windowType.getDimSize(1));
  std::optional<KernelStrategy> strategy = chooseStrategy(w.root, lanes);
  if (heights.empty() || w.widths.empty() || !strategy)
    return failure();

  // Workgroups: rows (each border segment one workgroup, the longest segment in chunks) or
  // chunks of channel tiles, whichever gives more, at most about `wanted`.
  int64_t work = 1;
  for (int64_t r : strategy->ranges)
    work *= r;
  int64_t wanted = std::clamp<int64_t>(work / std::max<int64_t>(minWork, 1), 1, maxWorkgroups);
  unsigned longest = 0;
  for (unsigned i = 0; i < heights.size(); ++i)
    if (heights[i].size > heights[longest].size)
      longest = i;
  int64_t borders = static_cast<int64_t>(heights.size()) - 1;
  int64_t interiorChunks =
      largestDivisorAtMost(heights[longest].size, std::max<int64_t>(wanted - borders, 1));
  int64_t channelTile = std::max<int64_t>(strategy->registers[3], 1);
  int64_t channelChunks = largestDivisorAtMost(out[3] / channelTile, wanted);
  // (Many border segments, as a 7x7 window over a 7x7 image, would make more row workgroups
  // than the work is worth: channels then.)
  bool byRows = wanted > 1 && borders + interiorChunks <= wanted && borders + interiorChunks >= channelChunks;
  if (wanted == 1)
    channelChunks = 1;

  Value dest = linalg::LinalgOp(writers.front()).getDpsInits()[0];
  linalg::LinalgOp last = writers.back();
  rewriter.setInsertionPoint(last);
  Value one = index(rewriter, loc, 1);
  SmallVector<SmallVector<linalg::LinalgOp>> groups;
  LogicalResult status = success();
  int64_t workgroups = 0;
  // A loop over workgroups [base, base + count) of this invocation's [begin, end); `body`
  // gets the chunk number and the output so far.
  auto workgroupLoop = [&](int64_t count, function_ref<Value(Value, Value)> body) {
    Value base = index(rewriter, loc, workgroups);
    Value lower = arith::MaxUIOp::create(rewriter, loc, range.getBegin(), base);
    Value upper = arith::MinUIOp::create(rewriter, loc, range.getEnd(), index(rewriter, loc, workgroups + count));
    auto loop = scf::ForOp::create(rewriter, loc, lower, upper, one, ValueRange{dest});
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value chunk = arith::SubIOp::create(rewriter, loc, loop.getInductionVar(), base);
    scf::YieldOp::create(rewriter, loc, body(chunk, loop.getRegionIterArgs()[0]));
    workgroups += count;
    dest = loop.getResult(0);
  };
  if (byRows) {
    for (auto [i, segment] : llvm::enumerate(heights)) {
      int64_t chunks = i == longest ? interiorChunks : 1, rows = segment.size / chunks;
      workgroupLoop(chunks, [&](Value chunk, Value output) {
        Value row = arith::AddIOp::create(rewriter, loc, index(rewriter, loc, segment.start),
                                          arith::MulIOp::create(rewriter, loc, chunk, index(rewriter, loc, rows)));
        RowPiece piece{row, rows, segment};
        return emitChunk(rewriter, loc, w, writers, rootIndex, output, row, rows, piece, index(rewriter, loc, 0),
                         out[3], groups, status);
      });
    }
  } else {
    int64_t channels = out[3] / channelChunks;
    workgroupLoop(channelChunks, [&](Value chunk, Value output) {
      SmallVector<RowPiece> pieces;
      for (const WindowSegment &segment : heights)
        pieces.push_back({index(rewriter, loc, segment.start), segment.size, segment});
      Value channel = arith::MulIOp::create(rewriter, loc, chunk, index(rewriter, loc, channels));
      return emitChunk(rewriter, loc, w, writers, rootIndex, output, index(rewriter, loc, 0), out[1], pieces,
                       channel, channels, groups, status);
    });
  }
  if (failed(status))
    return failure();
  rewriter.replaceAllUsesWith(last->getResult(0), dest);
  for (linalg::LinalgOp writer : llvm::reverse(writers))
    rewriter.eraseOp(writer);
  rewriter.eraseOp(pad);

  // Register tiles: each region as the whole op would be, its initializers and epilogue
  // register tile by register tile with it (the accumulators start from the bias and take the
  // activation in registers); where its columns are peeled (an interior whose width only small
  // tiles divide, 111 columns of a 113-wide image: whole 16-column tiles and the rest), the
  // initializers and epilogue run on the region in rows of vectors.
  for (SmallVector<linalg::LinalgOp> &group : groups) {
    std::optional<KernelStrategy> s = chooseStrategy(group[rootIndex], lanes);
    if (!s)
      return failure();
    std::optional<FusedBlocks> fused =
        group.size() > 1 && !splitRowTiles(*s, lanes) ? fusedBlocks(group[rootIndex], *s, lanes) : std::nullopt;
    if (fused) {
      SmallVector<linalg::LinalgOp> tiled;
      if (failed(blockLoops(rewriter, group, fused->blocks, fused->order, tiled)))
        return failure();
      group = tiled;
    }
    for (auto [i, op] : llvm::enumerate(group)) {
      if (i == rootIndex) {
        if (failed(tileForRegisters(rewriter, op, s->registers, {}, lanes)))
          return failure();
      } else if (!fused && failed(tileOp(rewriter, op, elementwiseRegisterTiles(op.getStaticLoopRanges(), lanes)))) {
        return failure();
      }
    }
  }
  return workgroups;
}

//===- KernelTiling.cpp - the tiling steps of hexir-tile-and-vectorize ----===//
#include "Target/Host/KernelTiling.h"

#include "Target/Host/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::hexir;

// A register tile of a packed convolution (one panel: p has extent 1) as the named
// convolution it is, on rank-reduced views of its filter [1, kh, kw, c, fi] and output
// [n, oh, ow, 1, fi] tiles, so that the convolution decomposition and vectorizer take it.
void mlir::hexir::toNamedConv(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> dilations) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto dropDim = [&](Value v, unsigned dim) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + dim);
    SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0)),
        ones(type.getRank(), rewriter.getIndexAttr(1)), sizes;
    for (int64_t s : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(s));
    return tensor::ExtractSliceOp::create(rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v,
                                          zeros, sizes, ones)
        .getResult();
  };
  Value out = op.getDpsInits()[0];
  Value filter = dropDim(op.getDpsInputs()[1], 0), out4 = dropDim(out, 3);
  auto attr = [&](ArrayRef<int64_t> values) {
    return DenseIntElementsAttr::get(RankedTensorType::get({2}, rewriter.getI64Type()), values);
  };
  Value conv = linalg::Conv2DNhwcHwcfOp::create(rewriter, loc, TypeRange{out4.getType()},
                                                ValueRange{op.getDpsInputs()[0], filter}, ValueRange{out4},
                                                attr(strides), attr(dilations))
                   ->getResult(0);
  auto outType = cast<RankedTensorType>(out.getType());
  SmallVector<OpFoldResult> zeros(outType.getRank(), rewriter.getIndexAttr(0)),
      ones(outType.getRank(), rewriter.getIndexAttr(1)), sizes;
  for (int64_t s : outType.getShape())
    sizes.push_back(rewriter.getIndexAttr(s));
  rewriter.replaceOp(op, tensor::InsertSliceOp::create(rewriter, loc, conv, out, zeros, sizes, ones).getResult());
}

bool mlir::hexir::windowTileAsContraction(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> strides) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.size() != 9 || ranges[5] != 1 || ranges[6] != 1 || strides.size() != 2)
    return false;
  Value image = op.getDpsInputs()[0];
  auto type = cast<RankedTensorType>(image.getType());
  // The tile's image slice spans (rows - 1) * stride + 1 positions in each spatial dimension.
  if (type.getRank() != 5 || type.getDimSize(1) != (ranges[1] - 1) * strides[0] + 1 ||
      type.getDimSize(2) != (ranges[2] - 1) * strides[1] + 1)
    return false;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> shape = {type.getDimSize(0), ranges[1], ranges[2], type.getDimSize(3), type.getDimSize(4)};
  SmallVector<OpFoldResult> zeros(5, rewriter.getIndexAttr(0)), sizes, steps;
  for (int64_t s : shape)
    sizes.push_back(rewriter.getIndexAttr(s));
  for (int64_t s : {int64_t{1}, strides[0], strides[1], int64_t{1}, int64_t{1}})
    steps.push_back(rewriter.getIndexAttr(s));
  Value rows = tensor::ExtractSliceOp::create(rewriter, loc, RankedTensorType::get(shape, type.getElementType()), image,
                                              zeros, sizes, steps);
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[0] = AffineMap::get(9, 0, {d(0), d(1), d(2), d(7), d(8)}, ctx);
  rewriter.modifyOpInPlace(op, [&] {
    op.getDpsInputOperand(0)->set(rows);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  return true;
}

// Tiles `op` with `sizes` (0: not tiled) and replaces it; returns the tiled op and the loops.
FailureOr<scf::SCFTilingResult> mlir::hexir::tileOp(RewriterBase &rewriter, Operation *op, ArrayRef<int64_t> sizes,
                                                    ArrayRef<int64_t> interchange) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setInterchange(interchange);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, result->replacements);
  return result;
}


FailureOr<SmallVector<Operation *>> mlir::hexir::tileForRegisters(RewriterBase &rewriter, linalg::LinalgOp op,
                                                                 ArrayRef<int64_t> registers,
                                                                 ArrayRef<int64_t> interchange, int64_t lanes) {
  SmallVector<std::pair<Operation *, SmallVector<int64_t>>> parts = {{op, llvm::to_vector(registers)}};
  std::optional<KernelStrategy> strategy = chooseStrategy(op, lanes);
  if (std::optional<RowTileSplit> rows = strategy ? splitRowTiles(*strategy, lanes) : std::nullopt) {
    rewriter.setInsertionPoint(op);
    auto [first, second] = linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), rows->loop,
                                           rewriter.getIndexAttr(rows->split));
    std::optional<KernelStrategy> a = first ? chooseStrategy(cast<linalg::LinalgOp>(first.getOperation()), lanes)
                                            : std::nullopt;
    std::optional<KernelStrategy> b = second ? chooseStrategy(cast<linalg::LinalgOp>(second.getOperation()), lanes)
                                             : std::nullopt;
    if (!a || !b)
      return failure();
    parts = {{first, a->registers}, {second, b->registers}};
  }
  SmallVector<Operation *> tiles;
  for (auto &[part, sizes] : parts) {
    SmallVector<int64_t> extents = cast<linalg::LinalgOp>(part).getStaticLoopRanges();
    for (unsigned i = 0; i < sizes.size(); ++i)
      if (sizes[i] >= extents[i])
        sizes[i] = 0;
    FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, part, sizes, interchange);
    if (failed(tiled))
      return failure();
    tiles.push_back(tiled->tiledOps[0]);
  }
  return tiles;
}

// The kernel's only op of type OpTy, of a static shape and returned (besides it the kernel has
// only constants and empty tensors); null otherwise.
template <typename OpTy>
static OpTy loneOp(func::FuncOp fn) {
  OpTy found;
  for (Operation &op : fn.getBody().front()) {
    if (isa<arith::ConstantOp, tensor::EmptyOp, func::ReturnOp>(op))
      continue;
    if (found || !isa<OpTy>(op))
      return nullptr;
    found = cast<OpTy>(op);
  }
  if (!found || !found.getResultType().hasStaticShape() || !found->hasOneUse() ||
      !isa<func::ReturnOp>(*found->getUsers().begin()))
    return nullptr;
  return found;
}

static int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() * static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

// A tensor of `type` at the rewriter's insertion point, in a stack buffer of `bytes` bytes
// marked `mark`: allocated once at the kernel's entry (64-byte aligned) and shared by every
// tensor that asks for the same mark and size, which the blocks of one thread use one after
// the other (the tensors viewing it never live at the same time).
static Value stackTensor(RewriterBase &rewriter, Location loc, StringRef mark, int64_t bytes, RankedTensorType type) {
  Operation *parent = rewriter.getInsertionBlock()->getParentOp();
  auto fn = isa<func::FuncOp>(parent) ? cast<func::FuncOp>(parent) : parent->getParentOfType<func::FuncOp>();
  auto bufferType = MemRefType::get({bytes}, rewriter.getI8Type());
  memref::AllocaOp buffer;
  for (auto alloca : fn.getBody().front().getOps<memref::AllocaOp>())
    if (alloca->hasAttr(mark) && alloca.getType() == bufferType)
      buffer = alloca;
  if (!buffer) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&fn.getBody().front());
    buffer = memref::AllocaOp::create(rewriter, loc, bufferType, rewriter.getI64IntegerAttr(64));
    buffer->setAttr(mark, rewriter.getUnitAttr());
  }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value view = memref::ViewOp::create(rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()), buffer,
                                      zero, ValueRange{});
  return bufferization::ToTensorOp::create(rewriter, loc, type, view, rewriter.getUnitAttr(), rewriter.getUnitAttr());
}

// Marks the stack buffer that a kernel's blocks of B are packed into.
static constexpr llvm::StringLiteral kPackedPanelsAttr = "hexir.packed_panels";

FailureOr<linalg::GenericOp> mlir::hexir::packPanelsInPlace(RewriterBase &rewriter, linalg::LinalgOp op) {
  linalg::GenericOp pack = panelPackOf(op);
  if (!pack)
    return linalg::GenericOp();
  // The slices between the packed B and what `op` reads, innermost first.
  SmallVector<tensor::ExtractSliceOp> slices;
  bool readsPack = false;
  for (Value v : op.getDpsInputs()) {
    SmallVector<tensor::ExtractSliceOp> chain;
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
      chain.push_back(slice);
      v = slice.getSource();
    }
    if (v.getDefiningOp() == pack.getOperation()) {
      slices = chain;
      readsPack = true;
    }
  }
  // A kernel whose one cache tile is all of B reads the packing whole: nothing to move.
  if (slices.empty())
    return readsPack ? pack : FailureOr<linalg::GenericOp>(failure());
  // The packing of each slice in turn, outermost first; a tile the next one replaces is dead.
  Operation *producer = pack;
  for (tensor::ExtractSliceOp slice : llvm::reverse(slices)) {
    rewriter.setInsertionPoint(slice);
    FailureOr<TilingResult> tiled =
        tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, cast<OpResult>(slice.getSource()));
    if (failed(tiled) || tiled->tiledOps.size() != 1 || tiled->tiledValues.size() != 1)
      return failure();
    rewriter.replaceOp(slice, tiled->tiledValues[0]);
    if (producer != pack.getOperation() && producer->use_empty())
      rewriter.eraseOp(producer);
    producer = tiled->tiledOps[0];
  }
  auto tile = dyn_cast<linalg::GenericOp>(producer);
  auto type = tile ? dyn_cast<RankedTensorType>(tile->getResult(0).getType()) : RankedTensorType();
  if (!type || !type.hasStaticShape())
    return failure();
  // Out of every loop the block does not depend on (a panel's block serves all row tiles and
  // blocks of rows): the tile with the slices and index computations it reads.
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  llvm::SetVector<Operation *> deps;
  if (failed(getBackwardSlice(tile.getOperation(), &deps, options)))
    return failure();
  while (auto loop = tile->getParentOfType<scf::ForOp>()) {
    SmallVector<Operation *> inside;
    for (Operation *dep : deps)
      if (loop->isProperAncestor(dep))
        inside.push_back(dep);
    llvm::SmallPtrSet<Operation *, 16> moving(inside.begin(), inside.end());
    bool invariant = llvm::all_of(inside, [&](Operation *dep) {
      return dep->getParentOp() == loop.getOperation() && isPure(dep) &&
             llvm::all_of(dep->getOperands(), [&](Value v) {
               return loop.isDefinedOutsideOfLoop(v) || moving.contains(v.getDefiningOp());
             });
    });
    if (!invariant)
      break;
    for (Operation *dep : inside)
      rewriter.moveOpBefore(dep, loop);
  }
  // Its buffer: the kernel's stack, shared by every block (peeled parts of the rows each pack
  // their own blocks), each block's packing writing it whole before the block's row tiles read
  // it.
  if (tensorBytes(type) > kPackedBlockBytes)
    return failure();
  rewriter.setInsertionPoint(tile);
  Value dest = stackTensor(rewriter, tile.getLoc(), kPackedPanelsAttr, kPackedBlockBytes, type);
  Operation *oldDest = tile.getDpsInits()[0].getDefiningOp();
  rewriter.modifyOpInPlace(tile, [&] { tile.getDpsInitsMutable()[0].set(dest); });
  if (oldDest && oldDest->use_empty())
    rewriter.eraseOp(oldDest);
  return tile;
}

// A kernel that only pads (before a convolution or pooling) is split into workgroups of rows
// of its result: each writes its rows' border and copies its rows of the source, in parallel.
LogicalResult mlir::hexir::splitPad(func::FuncOp fn, int64_t minWork, int64_t maxWorkgroups) {
  auto pad = loneOp<tensor::PadOp>(fn);
  if (!pad)
    return success();
  ArrayRef<int64_t> shape = pad.getResultType().getShape();
  // The outermost dimension with more than one index.
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < shape.size() && !dim; ++d)
    if (shape[d] > 1)
      dim = d;
  if (!dim)
    return success();
  int64_t elements = pad.getResultType().getNumElements();
  int64_t wanted = std::clamp<int64_t>(elements / std::max<int64_t>(minWork, 1), 1, maxWorkgroups);
  int64_t chunk = divisorAtLeast(shape[*dim], (shape[*dim] + wanted - 1) / wanted);
  int64_t workgroups = shape[*dim] / chunk;
  if (workgroups <= 1)
    return success();
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic) ||
      llvm::any_of(pad.getStaticHigh(), ShapedType::isDynamic))
    return success();
  // Destination-passing form, so that it bufferizes in place: for each chunk of rows
  // [r0, r0 + chunk) of the result, fill the chunk, then copy the source rows that land in it.
  IRRewriter rewriter(fn.getContext());
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(pad);
  auto range = mlir::hexir::WorkgroupRangeOp::create(rewriter, loc, rewriter.getIndexType(), rewriter.getIndexType());
  RankedTensorType type = pad.getResultType();
  RankedTensorType sourceType = pad.getSourceType();
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
  Value chunkV = index(chunk);
  auto loop = scf::ForOp::create(rewriter, loc, range.getBegin(), range.getEnd(), index(1), ValueRange{empty});
  rewriter.setInsertionPointToStart(loop.getBody());
  Value dest = loop.getRegionIterArgs()[0];
  Value r0 = arith::MulIOp::create(rewriter, loc, loop.getInductionVar(), chunkV);
  unsigned rank = shape.size();
  SmallVector<OpFoldResult> tileOffsets(rank, rewriter.getIndexAttr(0)), tileSizes, ones(rank, rewriter.getIndexAttr(1));
  for (unsigned d = 0; d < rank; ++d)
    tileSizes.push_back(rewriter.getIndexAttr(d == *dim ? chunk : shape[d]));
  tileOffsets[*dim] = r0;
  Value destTile = tensor::ExtractSliceOp::create(rewriter, loc, dest, tileOffsets, tileSizes, ones);
  Value filled = linalg::FillOp::create(rewriter, loc, padValue, destTile)->getResult(0);
  // Source rows [s0, s1) = [r0, r0 + chunk) - low, clamped to the source.
  int64_t low = pad.getStaticLow()[*dim], rows = sourceType.getDimSize(*dim);
  auto clamp = [&](Value v) {
    return arith::MinSIOp::create(rewriter, loc, arith::MaxSIOp::create(rewriter, loc, v, index(0)), index(rows))
        .getResult();
  };
  Value s0 = clamp(arith::SubIOp::create(rewriter, loc, r0, index(low)));
  Value s1 = clamp(arith::SubIOp::create(rewriter, loc, arith::AddIOp::create(rewriter, loc, r0, index(chunk - low)), index(0)));
  Value count = arith::SubIOp::create(rewriter, loc, s1, s0);
  SmallVector<OpFoldResult> srcOffsets, srcSizes, dstOffsets;
  for (unsigned d = 0; d < rank; ++d) {
    if (d == *dim) {
      srcOffsets.push_back(s0);
      srcSizes.push_back(count);
      // Row s0 of the source is row s0 + low - r0 of the chunk.
      dstOffsets.push_back(
          arith::SubIOp::create(rewriter, loc, arith::AddIOp::create(rewriter, loc, s0, index(low)), r0).getResult());
    } else {
      srcOffsets.push_back(rewriter.getIndexAttr(0));
      srcSizes.push_back(rewriter.getIndexAttr(sourceType.getDimSize(d)));
      dstOffsets.push_back(rewriter.getIndexAttr(pad.getStaticLow()[d]));
    }
  }
  Value rowsOfSource = tensor::ExtractSliceOp::create(rewriter, loc, pad.getSource(), srcOffsets, srcSizes, ones);
  Value tile = tensor::InsertSliceOp::create(rewriter, loc, rowsOfSource, filled, dstOffsets, srcSizes, ones);
  Value updated = tensor::InsertSliceOp::create(rewriter, loc, tile, dest, tileOffsets, tileSizes, ones);
  scf::YieldOp::create(rewriter, loc, updated);
  rewriter.replaceOp(pad, loop.getResults());
  fn->setAttr(mlir::hexir::kWorkgroupsAttrName, rewriter.getI64IntegerAttr(workgroups));
  return success();
}

// A kernel that only concatenates is split into workgroups of chunks of its outermost
// dimension (other than the concatenated one) with more than one index: each copies its rows
// of every operand into place, in parallel (squeezenet's channel concatenations of 55x55x128
// floats were one workgroup: 0.13 ms with either thread count).
LogicalResult mlir::hexir::splitConcat(func::FuncOp fn, int64_t minWork, int64_t maxWorkgroups) {
  auto concat = loneOp<tensor::ConcatOp>(fn);
  if (!concat)
    return success();
  RankedTensorType type = concat.getResultType();
  ArrayRef<int64_t> shape = type.getShape();
  unsigned axis = concat.getDim();
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < shape.size() && !dim; ++d)
    if (d != axis && shape[d] > 1)
      dim = d;
  if (!dim)
    return success();
  if (llvm::any_of(concat.getInputs(), [&](Value in) {
        return cast<RankedTensorType>(in.getType()).isDynamicDim(axis);
      }))
    return success();
  int64_t wanted = std::clamp<int64_t>(type.getNumElements() / std::max<int64_t>(minWork, 1), 1, maxWorkgroups);
  int64_t chunk = divisorAtLeast(shape[*dim], (shape[*dim] + wanted - 1) / wanted);
  int64_t workgroups = shape[*dim] / chunk;
  if (workgroups <= 1)
    return success();
  IRRewriter rewriter(fn.getContext());
  Location loc = concat.getLoc();
  rewriter.setInsertionPoint(concat);
  auto range = mlir::hexir::WorkgroupRangeOp::create(rewriter, loc, rewriter.getIndexType(), rewriter.getIndexType());
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ForOp::create(rewriter, loc, range.getBegin(), range.getEnd(), one, ValueRange{empty});
  rewriter.setInsertionPointToStart(loop.getBody());
  Value dest = loop.getRegionIterArgs()[0];
  Value r0 = arith::MulIOp::create(rewriter, loc, loop.getInductionVar(),
                                   arith::ConstantIndexOp::create(rewriter, loc, chunk));
  unsigned rank = shape.size();
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  int64_t at = 0;
  for (Value input : concat.getInputs()) {
    // Other dimensions are the result's (an input may leave them dynamic); the axis is static.
    ArrayRef<int64_t> inShape = cast<RankedTensorType>(input.getType()).getShape();
    SmallVector<OpFoldResult> srcOffsets(rank, rewriter.getIndexAttr(0)), sizes, dstOffsets(rank, rewriter.getIndexAttr(0));
    for (unsigned d = 0; d < rank; ++d)
      sizes.push_back(rewriter.getIndexAttr(d == *dim ? chunk : d == axis ? inShape[d] : shape[d]));
    srcOffsets[*dim] = r0;
    dstOffsets[*dim] = r0;
    dstOffsets[axis] = rewriter.getIndexAttr(at);
    at += inShape[axis];
    Value rows = tensor::ExtractSliceOp::create(rewriter, loc, input, srcOffsets, sizes, ones);
    dest = tensor::InsertSliceOp::create(rewriter, loc, rows, dest, dstOffsets, sizes, ones);
  }
  scf::YieldOp::create(rewriter, loc, dest);
  rewriter.replaceOp(concat, loop.getResults());
  fn->setAttr(mlir::hexir::kWorkgroupsAttrName, rewriter.getI64IntegerAttr(workgroups));
  return success();
}

// `writer`'s tile computing the chunk [offsets, offsets + sizes) of its output onto `current`
// (the chunk as the previous writer left it).
FailureOr<linalg::LinalgOp> mlir::hexir::tileOnChunk(RewriterBase &rewriter, linalg::LinalgOp writer,
                                                     ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                                                     Value current) {
  // The writer's loops that the output dimensions index.
  AffineMap map = writer.getMatchingIndexingMap(writer.getDpsInitOperand(0));
  SmallVector<int64_t> ranges = writer.getStaticLoopRanges();
  SmallVector<OpFoldResult> loopOffsets(ranges.size(), rewriter.getIndexAttr(0)), loopSizes;
  for (int64_t r : ranges)
    loopSizes.push_back(rewriter.getIndexAttr(r));
  for (unsigned d = 0; d < offsets.size(); ++d) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
    if (!dim)
      return failure();
    loopOffsets[dim.getPosition()] = offsets[d];
    loopSizes[dim.getPosition()] = sizes[d];
  }
  FailureOr<TilingResult> tile =
      cast<TilingInterface>(writer.getOperation()).getTiledImplementation(rewriter, loopOffsets, loopSizes);
  if (failed(tile) || tile->tiledOps.size() != 1)
    return failure();
  auto tiledOp = cast<linalg::LinalgOp>(tile->tiledOps[0]);
  OpOperand *tiledInit = tiledOp.getDpsInitOperand(0);
  Operation *slice = tiledInit->get().getDefiningOp();
  rewriter.modifyOpInPlace(tiledOp, [&] { tiledInit->set(current); });
  if (slice && slice->use_empty())
    rewriter.eraseOp(slice);
  return tiledOp;
}

std::optional<bool> mlir::hexir::narrowingChain(ArrayRef<linalg::LinalgOp> writers) {
  if (writers.size() < 2)
    return false;
  auto wide = cast<RankedTensorType>(writers.front()->getResult(0).getType());
  auto out = cast<RankedTensorType>(writers.back()->getResult(0).getType());
  if (llvm::any_of(writers.drop_back(), [&](linalg::LinalgOp w) {
        return w->getResult(0).getType() != wide;
      }))
    return std::nullopt;
  if (out == wide)
    return false;
  if (out.getShape() != wide.getShape())
    return std::nullopt;
  return true;
}

Value mlir::hexir::chainDestination(ArrayRef<linalg::LinalgOp> writers) {
  std::optional<bool> narrows = narrowingChain(writers);
  linalg::LinalgOp owner = narrows && *narrows ? writers.back() : writers.front();
  return owner.getDpsInits()[0];
}

// Marks a kernel's stack buffers for the wide tiles of a narrowing chain.
static constexpr llvm::StringLiteral kWideTileAttr = "hexir.wide_tile";

// The chunk [offsets, offsets + sizes) of `dest` computed by every writer's tile in order, each
// onto the previous one's (appended to `tiled`), and inserted back: the updated `dest`. A
// narrowing chain's root and initializers compute the chunk in a wide tile of their own, which
// the epilogue's tile reads in place of the root's result and narrows into the chunk of `dest`:
// a register tile's in a stack buffer (`registers`), a larger chunk's in an
// empty tensor that the register blocks inside it replace (blockLoops).
static FailureOr<Value> writersOnChunk(RewriterBase &rewriter, Location loc, ArrayRef<linalg::LinalgOp> writers,
                                       Value dest, ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                                       SmallVectorImpl<linalg::LinalgOp> &tiled, bool registers = false) {
  std::optional<bool> narrows = narrowingChain(writers);
  if (!narrows)
    return failure();
  SmallVector<OpFoldResult> ones(offsets.size(), rewriter.getIndexAttr(1));
  Value out = tensor::ExtractSliceOp::create(rewriter, loc, dest, offsets, sizes, ones);
  ArrayRef<linalg::LinalgOp> chain = *narrows ? writers.drop_back() : writers;
  Value current = out;
  if (*narrows) {
    auto wide = cast<RankedTensorType>(chain.front()->getResult(0).getType());
    SmallVector<int64_t> shape;
    for (OpFoldResult size : sizes) {
      std::optional<int64_t> s = getConstantIntValue(size);
      if (!s)
        return failure();
      shape.push_back(*s);
    }
    auto tileType = RankedTensorType::get(shape, wide.getElementType());
    // (A register tile's wide values: in registers once the accumulators are hoisted.)
    current = registers ? stackTensor(rewriter, loc, kWideTileAttr, tensorBytes(tileType), tileType)
                        : tensor::EmptyOp::create(rewriter, loc, shape, wide.getElementType()).getResult();
  }
  for (linalg::LinalgOp writer : chain) {
    FailureOr<linalg::LinalgOp> tiledOp = tileOnChunk(rewriter, writer, offsets, sizes, current);
    if (failed(tiledOp))
      return failure();
    current = (*tiledOp)->getResult(0);
    tiled.push_back(*tiledOp);
  }
  if (*narrows) {
    linalg::LinalgOp epilogue = writers.back();
    Value wide = chain.back()->getResult(0);
    SmallVector<unsigned> reads;
    for (OpOperand *in : epilogue.getDpsInputOperands())
      if (in->get() == wide)
        reads.push_back(in->getOperandNumber());
    if (reads.empty())
      return failure();
    FailureOr<linalg::LinalgOp> tiledOp = tileOnChunk(rewriter, epilogue, offsets, sizes, out);
    if (failed(tiledOp))
      return failure();
    for (unsigned operand : reads) {
      OpOperand &read = (*tiledOp)->getOpOperand(operand);
      Operation *slice = read.get().getDefiningOp();
      rewriter.modifyOpInPlace(*tiledOp, [&] { read.set(current); });
      if (slice && slice->use_empty())
        rewriter.eraseOp(slice);
    }
    current = (*tiledOp)->getResult(0);
    tiled.push_back(*tiledOp);
  }
  return tensor::InsertSliceOp::create(rewriter, loc, current, dest, offsets, sizes, ones).getResult();
}

// The workgroup loop: one loop over this invocation's chunks [begin, end) of the output (the
// chunks of two split dimensions numbered row-major). In each iteration every writer computes
// its tile of the chunk, in order, onto the previous writer's tile: a chunk's bias, its
// convolution and its activation follow each other while the chunk is in cache. Replaces
// `writers` by their tiles in `tiled`.
LogicalResult mlir::hexir::workgroupLoop(RewriterBase &rewriter, SmallVector<linalg::LinalgOp> writers,
                                         ArrayRef<WorkgroupSplit> splits, WorkgroupRangeOp range,
                                         SmallVector<linalg::LinalgOp> &tiled, std::optional<int64_t> base) {
  linalg::LinalgOp last = writers.back();
  Location loc = last.getLoc();
  auto type = cast<RankedTensorType>(last->getResult(0).getType());
  if (!narrowingChain(writers).has_value())
    return failure();
  rewriter.setInsertionPoint(last);
  Value dest = chainDestination(writers);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value lower = range.getBegin(), upper = range.getEnd();
  if (base) {
    // Workgroups [base, base + count) of the kernel's: this invocation's part of them.
    int64_t count = 1;
    for (const WorkgroupSplit &split : splits)
      count *= split.count;
    lower = arith::MaxUIOp::create(rewriter, loc, lower, arith::ConstantIndexOp::create(rewriter, loc, *base));
    upper = arith::MinUIOp::create(rewriter, loc, upper, arith::ConstantIndexOp::create(rewriter, loc, *base + count));
  }
  auto loop = scf::ForOp::create(rewriter, loc, lower, upper, one, ValueRange{dest});
  rewriter.setInsertionPointToStart(loop.getBody());
  // The chunk's offsets in the output.
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes;
  for (int64_t d : type.getShape())
    sizes.push_back(rewriter.getIndexAttr(d));
  Value rest = loop.getInductionVar();
  if (base)
    rest = arith::SubIOp::create(rewriter, loc, rest, arith::ConstantIndexOp::create(rewriter, loc, *base));
  for (const WorkgroupSplit &split : llvm::reverse(splits)) {
    Value count = arith::ConstantIndexOp::create(rewriter, loc, split.count);
    Value index = split.outDim == splits.front().outDim
                      ? rest
                      : arith::RemUIOp::create(rewriter, loc, rest, count).getResult();
    if (split.outDim != splits.front().outDim)
      rest = arith::DivUIOp::create(rewriter, loc, rest, count);
    offsets[split.outDim] =
        arith::MulIOp::create(rewriter, loc, index, arith::ConstantIndexOp::create(rewriter, loc, split.chunk))
            .getResult();
    sizes[split.outDim] = rewriter.getIndexAttr(split.chunk);
  }
  tiled.clear();
  FailureOr<Value> updated = writersOnChunk(rewriter, loc, writers, loop.getRegionIterArgs()[0], offsets, sizes, tiled);
  if (failed(updated))
    return failure();
  scf::YieldOp::create(rewriter, loc, *updated);
  rewriter.replaceAllUsesWith(last->getResult(0), loop.getResult(0));
  for (linalg::LinalgOp writer : llvm::reverse(writers))
    rewriter.eraseOp(writer);
  return success();
}

LogicalResult mlir::hexir::blockLoops(RewriterBase &rewriter, SmallVector<linalg::LinalgOp> writers,
                                      ArrayRef<int64_t> blocks, ArrayRef<unsigned> order,
                                      SmallVector<linalg::LinalgOp> &tiled) {
  linalg::LinalgOp last = writers.back();
  Location loc = last.getLoc();
  auto type = cast<RankedTensorType>(last->getResult(0).getType());
  if (!narrowingChain(writers).has_value() || !type.hasStaticShape() || blocks.size() != static_cast<size_t>(type.getRank()))
    return failure();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<OpFoldResult> offsets, sizes;
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (blocks[d] > 0 && shape[d] % blocks[d] != 0)
      return failure();
    offsets.push_back(rewriter.getIndexAttr(0));
    sizes.push_back(rewriter.getIndexAttr(blocks[d] > 0 ? blocks[d] : shape[d]));
  }
  rewriter.setInsertionPoint(last);
  Value dest = chainDestination(writers);
  // The loop nest, outermost first, each loop carrying the output through its iterations.
  SmallVector<scf::ForOp> loops;
  for (unsigned d : order) {
    if (blocks[d] <= 0 || blocks[d] >= shape[d])
      continue;
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
    Value init = loops.empty() ? dest : loops.back().getRegionIterArgs()[0];
    auto loop = scf::ForOp::create(rewriter, loc, index(0), index(shape[d]), index(blocks[d]), ValueRange{init});
    if (!loops.empty())
      scf::YieldOp::create(rewriter, loc, loop.getResults());
    rewriter.setInsertionPointToStart(loop.getBody());
    offsets[d] = loop.getInductionVar();
    loops.push_back(loop);
  }
  // (One block: a narrowing chain still takes its wide tile, which stays in registers.)
  if (loops.empty() && !*narrowingChain(writers)) {
    tiled.assign(writers.begin(), writers.end());
    return success();
  }
  tiled.clear();
  FailureOr<Value> updated = writersOnChunk(rewriter, loc, writers,
                                            loops.empty() ? dest : loops.back().getRegionIterArgs()[0], offsets,
                                            sizes, tiled, /*registers=*/true);
  if (failed(updated))
    return failure();
  if (loops.empty()) {
    rewriter.replaceAllUsesWith(last->getResult(0), *updated);
  } else {
    scf::YieldOp::create(rewriter, loc, *updated);
    rewriter.replaceAllUsesWith(last->getResult(0), loops.front().getResult(0));
  }
  for (linalg::LinalgOp writer : llvm::reverse(writers))
    rewriter.eraseOp(writer);
  return success();
}

FailureOr<bool> mlir::hexir::collapseRows(RewriterBase &rewriter, func::FuncOp fn, linalg::LinalgOp root,
                                        ArrayRef<int64_t> rows) {
  MLIRContext *ctx = fn.getContext();
  auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  if (!type || rows.size() < 2)
    return false;
  // The output dimensions of the rows, consecutive.
  AffineMap rootOut = root.getMatchingIndexingMap(root.getDpsInitOperand(0));
  SmallVector<unsigned> outDims;
  for (int64_t loop : rows) {
    std::optional<unsigned> found;
    for (unsigned d = 0; d < rootOut.getNumResults(); ++d)
      if (auto dim = dyn_cast<AffineDimExpr>(rootOut.getResult(d)); dim && dim.getPosition() == loop)
        found = d;
    if (!found || (!outDims.empty() && *found != outDims.back() + 1))
      return false;
    outDims.push_back(*found);
  }
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d > outDims.front() && d <= outDims.back())
      reassociation.back().push_back(d);
    else
      reassociation.push_back({d});
  }
  // Every writer, and the loops it walks the rows with.
  SmallVector<std::pair<linalg::LinalgOp, ReassociationIndices>> writers;
  for (Operation &op : fn.getBody().front()) {
    auto writer = dyn_cast<linalg::LinalgOp>(op);
    // (A narrowing epilogue writes the same shape in another element type.)
    auto writerType = writer && op.getNumResults() == 1 ? dyn_cast<RankedTensorType>(op.getResult(0).getType())
                                                        : RankedTensorType();
    if (!writerType || writerType.getShape() != type.getShape())
      continue;
    if (writer.getNumDpsInits() != 1)
      return false;
    // A slice of a larger tensor (the interior of a padded one, see padsShareProducers) has
    // gaps between its rows.
    if (llvm::any_of(writer.getDpsInputs(), [](Value v) { return v.getDefiningOp<tensor::ExtractSliceOp>(); }))
      return false;
    AffineMap out = writer.getMatchingIndexingMap(writer.getDpsInitOperand(0));
    ReassociationIndices loops;
    for (unsigned d : outDims) {
      auto dim = dyn_cast<AffineDimExpr>(out.getResult(d));
      if (!dim || (!loops.empty() && dim.getPosition() != loops.back() + 1))
        return false;
      loops.push_back(dim.getPosition());
    }
    if (!linalg::areDimSequencesPreserved(writer.getIndexingMapsArray(), {loops}))
      return false;
    writers.push_back({writer, loops});
  }
  for (auto &[writer, loops] : writers) {
    Location loc = writer.getLoc();
    rewriter.setInsertionPoint(writer);
    if (auto fill = dyn_cast<linalg::FillOp>(writer.getOperation())) {
      Value dest = tensor::CollapseShapeOp::create(rewriter, loc, fill.getDpsInits()[0], reassociation);
      Value filled = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], dest)->getResult(0);
      rewriter.replaceOp(fill, tensor::ExpandShapeOp::create(rewriter, loc, fill.getResultTypes()[0], filled,
                                                             reassociation)
                                   .getResult());
      continue;
    }
    FailureOr<linalg::CollapseResult> collapsed = linalg::collapseOpIterationDims(writer, {loops}, rewriter);
    if (failed(collapsed))
      return failure();
    rewriter.replaceOp(writer, collapsed->results);
  }
  // One writer's expanded result collapsed again for the next: the collapsed value itself.
  RewritePatternSet patterns(ctx);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  if (failed(applyPatternsGreedily(fn, std::move(patterns))))
    return failure();
  // Kernels take bare pointers, so the arguments read only collapsed and the result can take
  // the collapsed types themselves: no views are left, whose accesses the accumulators could
  // not be hoisted past (a view may alias them).
  Block &body = fn.getBody().front();
  SmallVector<Type> inputs(fn.getArgumentTypes()), results(fn.getResultTypes());
  for (BlockArgument arg : body.getArguments()) {
    tensor::CollapseShapeOp first;
    bool collapsedOnly = !arg.use_empty();
    for (Operation *user : arg.getUsers()) {
      auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
      if (!collapse || (first && (collapse.getResultType() != first.getResultType() ||
                                  collapse.getReassociationIndices() != first.getReassociationIndices()))) {
        collapsedOnly = false;
        break;
      }
      first = first ? first : collapse;
    }
    if (!collapsedOnly)
      continue;
    arg.setType(first.getResultType());
    inputs[arg.getArgNumber()] = first.getResultType();
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      rewriter.replaceAllUsesWith(user->getResult(0), arg);
      rewriter.eraseOp(user);
    }
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (OpOperand &operand : ret->getOpOperands())
    if (auto expand = operand.get().getDefiningOp<tensor::ExpandShapeOp>()) {
      rewriter.modifyOpInPlace(ret, [&] { operand.set(expand.getSrc()); });
      results[operand.getOperandNumber()] = expand.getSrcType();
      if (expand->use_empty())
        rewriter.eraseOp(expand);
    }
  fn.setType(FunctionType::get(ctx, inputs, results));
  return true;
}

// Two parts of the output along `dim`: in each, every writer computes its tile of the part onto
// the previous writer's, as in a workgroup (tileOnChunk); the second part goes onto the first
// one's result, so the writers' order per element is unchanged.
LogicalResult mlir::hexir::splitWriters(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> writers, unsigned dim,
                                        int64_t split, SmallVectorImpl<SmallVector<linalg::LinalgOp>> &parts) {
  linalg::LinalgOp last = writers.back();
  Location loc = last.getLoc();
  auto type = cast<RankedTensorType>(last->getResult(0).getType());
  if (!narrowingChain(writers).has_value() || dim >= type.getRank() || split <= 0 ||
      split >= type.getDimSize(dim))
    return failure();
  rewriter.setInsertionPoint(last);
  Value dest = chainDestination(writers);
  int64_t rank = type.getRank();
  for (auto [start, size] : {std::pair<int64_t, int64_t>(0, split), {split, type.getDimSize(dim) - split}}) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes;
    for (int64_t d : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    offsets[dim] = rewriter.getIndexAttr(start);
    sizes[dim] = rewriter.getIndexAttr(size);
    FailureOr<Value> updated = writersOnChunk(rewriter, loc, writers, dest, offsets, sizes, parts.emplace_back());
    if (failed(updated))
      return failure();
    dest = *updated;
  }
  rewriter.replaceAllUsesWith(last->getResult(0), dest);
  for (linalg::LinalgOp writer : llvm::reverse(writers))
    rewriter.eraseOp(writer);
  return success();
}

// The part of a tensor of `shape` outside the box [low, low + inner) as disjoint slabs: for
// each dimension d, its low and high ranges with the dimensions before d inside the box and
// those after d whole. Calls `slab(offsets, sizes)` for each.
static void forEachBorderSlab(ArrayRef<int64_t> shape, ArrayRef<int64_t> low, ArrayRef<int64_t> inner,
                              function_ref<void(ArrayRef<int64_t>, ArrayRef<int64_t>)> slab) {
  unsigned rank = shape.size();
  for (unsigned d = 0; d < rank; ++d) {
    int64_t high = shape[d] - low[d] - inner[d];
    for (auto [start, size] : {std::pair(int64_t(0), low[d]), std::pair(low[d] + inner[d], high)}) {
      if (size == 0)
        continue;
      SmallVector<int64_t> offsets, sizes;
      for (unsigned j = 0; j < rank; ++j) {
        offsets.push_back(j < d ? low[j] : j == d ? start : 0);
        sizes.push_back(j < d ? inner[j] : j == d ? size : shape[j]);
      }
      slab(offsets, sizes);
    }
  }
}

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

// `empty` (of `type`) with its part outside the box [low, low + inner) written by workgroup
// `begin` == 0, slab by slab: `slab(acc, offsets, sizes)` returns `acc` with one slab written.
// Other workgroups see `empty`; none of them writes outside the box.
static Value borderInWorkgroupZero(RewriterBase &rewriter, Location loc, RankedTensorType type, Value empty,
                                   Value begin, ArrayRef<int64_t> low, ArrayRef<int64_t> inner,
                                   function_ref<Value(Value, ArrayRef<OpFoldResult>, ArrayRef<OpFoldResult>)> slab) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, begin, zero);
  auto border = scf::IfOp::create(rewriter, loc, TypeRange{type}, first, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&border.getThenRegion().front());
  Value acc = empty;
  forEachBorderSlab(type.getShape(), low, inner, [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
    acc = slab(acc, indexAttrs(rewriter, offsets), indexAttrs(rewriter, sizes));
  });
  scf::YieldOp::create(rewriter, loc, acc);
  rewriter.setInsertionPointToStart(&border.getElseRegion().front());
  scf::YieldOp::create(rewriter, loc, empty);
  return border.getResult(0);
}

// A kernel that pads its root's result (dispatch formation fuses the producer of a pad into
// the pad's kernel) writes the result in place into the padded tensor: workgroup 0 fills the
// border, the root's accumulator is the interior. No unpadded tensor and no copy. Returns the
// interior, which replaces the tensor.empty the root's initializers start from.
Value mlir::hexir::padInPlace(RewriterBase &rewriter, tensor::PadOp pad, Value begin,
                              SmallVectorImpl<linalg::FillOp> &fills) {
  Location loc = pad.getLoc();
  RankedTensorType type = pad.getResultType();
  ArrayRef<int64_t> shape = type.getShape(), source = pad.getSourceType().getShape();
  ArrayRef<int64_t> low = pad.getStaticLow();
  Attribute value;
  (void)matchPattern(pad.getConstantPaddingValue(), m_Constant(&value));
  Value padValue = arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(value));
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  SmallVector<OpFoldResult> ones(shape.size(), rewriter.getIndexAttr(1));
  Value padded = borderInWorkgroupZero(
      rewriter, loc, type, empty, begin, low, source,
      [&](Value acc, ArrayRef<OpFoldResult> o, ArrayRef<OpFoldResult> n) -> Value {
        Value slab = tensor::ExtractSliceOp::create(rewriter, loc, acc, o, n, ones);
        auto fill = linalg::FillOp::create(rewriter, loc, padValue, slab);
        fills.push_back(fill);
        return tensor::InsertSliceOp::create(rewriter, loc, fill->getResult(0), acc, o, n, ones);
      });
  SmallVector<OpFoldResult> offsets = indexAttrs(rewriter, low), sizes = indexAttrs(rewriter, source);
  Value interior = tensor::ExtractSliceOp::create(rewriter, loc, padded, offsets, sizes, ones);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(pad);
    Value result = tensor::InsertSliceOp::create(rewriter, loc, pad.getSource(), padded, offsets, sizes, ones);
    rewriter.replaceOp(pad, result);
  }
  return interior;
}

// A kernel that writes its root's result into a slice of its destination (a concatenation's
// chain of slice writers, see OutlineDispatches' concatsInPlace) computes the result in that
// slice of its output. A destination that is an argument is copied into the output around the
// slice, by workgroup 0 (no other workgroup writes there): slab copies between one region of
// two buffers, which ExpandCopies skips when the plan gives both one buffer, as it does when
// the argument dies here. Returns the slice, which replaces the tensor.empty the root's
// initializers start from.
Value mlir::hexir::sliceInPlace(RewriterBase &rewriter, tensor::InsertSliceOp insert, Value begin) {
  Location loc = insert.getLoc();
  RankedTensorType type = insert.getDestType();
  ArrayRef<int64_t> shape = type.getShape(), inner = insert.getSourceType().getShape();
  ArrayRef<int64_t> low = insert.getStaticOffsets();
  Value dest = insert.getDest();
  Value output = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  SmallVector<OpFoldResult> ones(shape.size(), rewriter.getIndexAttr(1));
  if (isa<BlockArgument>(dest))
    output = borderInWorkgroupZero(rewriter, loc, type, output, begin, low, inner,
                                   [&](Value acc, ArrayRef<OpFoldResult> o, ArrayRef<OpFoldResult> n) -> Value {
                                     Value slab = tensor::ExtractSliceOp::create(rewriter, loc, dest, o, n, ones);
                                     return tensor::InsertSliceOp::create(rewriter, loc, slab, acc, o, n, ones);
                                   });
  rewriter.modifyOpInPlace(insert, [&] { insert.getDestMutable().assign(output); });
  return tensor::ExtractSliceOp::create(rewriter, loc, output, indexAttrs(rewriter, low), indexAttrs(rewriter, inner),
                                        ones);
}

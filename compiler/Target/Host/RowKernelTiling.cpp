//===- RowKernelTiling.cpp - row kernels split into workgroups of rows ----===//
//
// The host's tiling of a row kernel (Transforms/RowKernel.h): a workgroup takes a chunk of
// rows and runs the whole chain on it while the chunk is in cache. The full-size
// intermediates live in the kernel's output (each elementwise op overwrites the previous one
// in place), or in a stack buffer of the chunk's rows where the output is narrower (int8), the
// per-row values (max, sum) in small stack buffers of the chunk's rows, so the kernel needs no
// memory beyond its operands.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/KernelTiling.h"

#include "Transforms/RowKernel.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// The partial-sum width of a reduction along n: up to four vectors that divide n, at least
// two steps of them; 0 when none does (the reduction then runs one element at a time).
int64_t partialWidth(int64_t n, int64_t lanes) {
  for (int64_t w : {4 * lanes, 2 * lanes, lanes, lanes / 2, int64_t(4)})
    if (w <= kMaxRowPartial && w >= 4 && n % w == 0 && n >= 2 * w)
      return w;
  return 0;
}


// at the kernel's entry, reused by every chunk.
Value chunkTemporary(RewriterBase &rewriter, Location loc, Block &entry, RankedTensorType type) {
  Value buffer;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&entry);
    buffer = memref::AllocaOp::create(rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  }
  return bufferization::ToTensorOp::create(rewriter, loc, type, buffer, /*restrict=*/true, /*writable=*/true);
}

// A reduction over [rows..., n] as partial reductions into [rows..., w] (element j * w + l of
// a row goes into partial l, read contiguously) and their combination into [rows...]; the
// partial op reduces over an outer dimension, which vectorizes along w.
struct SplitRows {
  linalg::FillOp fill; // the partials' neutral start
  linalg::GenericOp partial, merge;
};
SplitRows splitRows(RewriterBase &rewriter, linalg::GenericOp op, int64_t w, Value partialInit) {
  Location loc = op.getLoc();
  unsigned rank = op.getNumLoops(), rows = rank - 1;
  int64_t n = op.getStaticLoopRanges().back();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  // Loops of the partial op: rows..., j, l with n = j * w + l.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    SmallVector<AffineExpr> results;
    std::optional<unsigned> nAt;
    for (unsigned i = 0; i < map.getNumResults(); ++i) {
      unsigned d = map.getDimPosition(i);
      if (d == rows) {
        nAt = i;
        results.push_back(getAffineDimExpr(rows, ctx));
        results.push_back(getAffineDimExpr(rows + 1, ctx));
      } else {
        results.push_back(getAffineDimExpr(d, ctx));
      }
    }
    Value value = in->get();
    if (nAt) {
      SmallVector<int64_t> shape(type.getShape());
      shape[*nAt] = n / w;
      shape.insert(shape.begin() + *nAt + 1, w);
      SmallVector<ReassociationIndices> groups;
      for (unsigned i = 0; i < type.getRank(); ++i) {
        unsigned at = i <= *nAt ? i : i + 1;
        groups.push_back(i == *nAt ? ReassociationIndices{at, at + 1} : ReassociationIndices{at});
      }
      value = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(shape, type.getElementType()), value,
                                            groups);
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(rank + 1, 0, results, ctx));
  }
  SmallVector<AffineExpr> outResults;
  for (unsigned d = 0; d < rows; ++d)
    outResults.push_back(getAffineDimExpr(d, ctx));
  outResults.push_back(getAffineDimExpr(rows + 1, ctx));
  maps.push_back(AffineMap::get(rank + 1, 0, outResults, ctx));
  SmallVector<utils::IteratorType> iterators(rows, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  iterators.push_back(utils::IteratorType::parallel);
  Operation *combine = rowCombiner(op);
  TypedAttr neutral = *arith::getNeutralElement(combine);
  Value identity = arith::ConstantOp::create(rewriter, loc, neutral);
  auto fill = linalg::FillOp::create(rewriter, loc, identity, partialInit);
  Value filled = fill.getResult(0);
  auto partial = linalg::GenericOp::create(rewriter, loc, TypeRange{partialInit.getType()}, inputs,
                                           ValueRange{filled}, maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(), partial.getRegion().end());
  // The partials combined along l, onto the op's own accumulator.
  // (getMajorSubMap(0) would be a null map, not (d0) -> ().)
  SmallVector<AffineMap> mergeMaps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                      AffineMap::get(rank, 0, ArrayRef(outResults).drop_back(), ctx)};
  SmallVector<utils::IteratorType> mergeIterators(rows, utils::IteratorType::parallel);
  mergeIterators.push_back(utils::IteratorType::reduction);
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  auto merge = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), ValueRange{partial->getResult(0)}, op.getDpsInits(), mergeMaps,
      mergeIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        OperationState state(l, combine->getName(), ValueRange{args[1], args[0]}, TypeRange{element},
                             combine->getAttrs());
        Operation *c = b.create(state);
        linalg::YieldOp::create(b, l, c->getResult(0));
      });
  rewriter.replaceOp(op, merge->getResults());
  return {fill, partial, merge};
}

} // namespace

linalg::GenericOp mlir::hexir::inPlaceOn(RewriterBase &rewriter, linalg::GenericOp op, Value value) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<unsigned> fromValue;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in->get() == value) {
      fromValue.push_back(in->getOperandNumber());
      continue;
    }
    inputs.push_back(in->get());
    maps.push_back(op.getMatchingIndexingMap(in));
  }
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  rewriter.setInsertionPoint(op);
  auto updated = linalg::GenericOp::create(rewriter, op.getLoc(), TypeRange{value.getType()}, inputs,
                                           ValueRange{value}, maps, op.getIteratorTypesArray());
  rewriter.cloneRegionBefore(op.getRegion(), updated.getRegion(), updated.getRegion().end());
  Block &body = updated.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  for (unsigned i : llvm::reverse(fromValue)) {
    body.getArgument(i).replaceAllUsesWith(acc);
    body.eraseArgument(i);
  }
  rewriter.replaceOp(op, updated->getResults());
  return updated;
}

FailureOr<int64_t> mlir::hexir::tileRowKernel(RewriterBase &rewriter, RowKernel &k, Value begin, Value end,
                                              int64_t lanes, int64_t minWork, int64_t maxWorkgroups,
                                              SmallVectorImpl<RowTile> &tiles) {
  unsigned rank = k.shape.size(), rows = rank - 1;
  Location loc = k.ops.back().getLoc();
  Block &entry = k.ops.back()->getParentOfType<func::FuncOp>().getBody().front();
  // Full-shape results in one buffer: each full-shape op accumulates onto the previous one (a
  // narrowing last op writes the output from the f32 values in a stack buffer).
  bool narrows = rowKernelNarrows(k);
  std::optional<unsigned> previous;
  for (unsigned i = 0; i < k.ops.size(); ++i) {
    if (k.kinds[i] != RowOpKind::Full || (narrows && i + 1 == k.ops.size()))
      continue;
    if (previous) {
      Value prior = k.ops[*previous]->getResult(0);
      if (llvm::is_contained(k.ops[i].getDpsInputs(), prior))
        k.ops[i] = inPlaceOn(rewriter, k.ops[i], prior);
      else
        rewriter.modifyOpInPlace(k.ops[i], [&] { k.ops[i].getDpsInitsMutable()[0].set(prior); });
    }
    previous = i;
  }

  // Workgroups: chunks of the longest row dimension, at least minWork elements of work each,
  // at most maxWorkgroups, their per-row temporaries within the stack budget.
  int64_t work = static_cast<int64_t>(k.ops.size());
  for (int64_t d : k.shape)
    work *= d;
  std::optional<unsigned> splitDim;
  for (unsigned d = 0; d < rows; ++d)
    if (!splitDim || k.shape[d] > k.shape[*splitDim])
      splitDim = d;
  int64_t extent = splitDim ? k.shape[*splitDim] : 1, otherRows = 1;
  for (unsigned d = 0; d < rows; ++d)
    if (d != splitDim)
      otherRows *= k.shape[d];
  int64_t wanted = std::clamp<int64_t>(work / std::max<int64_t>(minWork, 1), 1, maxWorkgroups);
  // The smallest chunk that gives at most `wanted` workgroups, smaller if the stack needs it.
  int64_t chunk = extent;
  for (int64_t c = (extent + wanted - 1) / wanted; c <= extent; ++c)
    if (extent % c == 0) {
      chunk = c;
      break;
    }
  while (chunk > 1 && rowTemporaryBytes(k) * otherRows * chunk > kRowStackBytes)
    do
      --chunk;
    while (extent % chunk);
  int64_t workgroups = extent / chunk;

  rewriter.setInsertionPointAfter(k.ops.back());
  auto type = cast<RankedTensorType>(k.ops.back()->getResult(0).getType());
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
  Value one = index(1), chunkSize = index(chunk);
  auto loop = scf::ForOp::create(rewriter, loc, begin, end, one, ValueRange{empty});
  rewriter.setInsertionPointToStart(loop.getBody());
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes, strides(rank, rewriter.getIndexAttr(1));
  for (int64_t d : k.shape)
    sizes.push_back(rewriter.getIndexAttr(d));
  if (splitDim) {
    offsets[*splitDim] = arith::MulIOp::create(rewriter, loc, loop.getInductionVar(), chunkSize).getResult();
    sizes[*splitDim] = rewriter.getIndexAttr(chunk);
  }
  Value output = tensor::ExtractSliceOp::create(rewriter, loc, loop.getRegionIterArgs()[0], offsets, sizes, strides);
  SmallVector<int64_t> chunkShape(type.getShape());
  if (splitDim)
    chunkShape[*splitDim] = chunk;
  SmallVector<int64_t> chunkRows(ArrayRef<int64_t>(chunkShape).drop_back());

  llvm::DenseMap<Operation *, Value> tileOf;
  bool firstFull = true;
  Value last;
  for (auto [op, kind] : llvm::zip(k.ops, k.kinds)) {
    unsigned loops = kind == RowOpKind::Row ? rows : rank;
    ArrayRef<OpFoldResult> loopOffsets = ArrayRef(offsets).take_front(loops),
                           loopSizes = ArrayRef(sizes).take_front(loops);
    FailureOr<TilingResult> tile =
        cast<TilingInterface>(op.getOperation()).getTiledImplementation(rewriter, loopOffsets, loopSizes);
    if (failed(tile) || tile->tiledOps.size() != 1 || !isa<linalg::GenericOp>(tile->tiledOps[0]))
      return op.emitError() << "could not tile a row kernel's op for its chunk of rows";
    auto tiled = cast<linalg::GenericOp>(tile->tiledOps[0]);
    // What the op reads of the kernel's other ops is their tile of the same rows.
    // (A rank-0 operand is read whole, not through a slice.)
    for (OpOperand &operand : tiled->getOpOperands()) {
      if (auto it = tileOf.find(operand.get().getDefiningOp()); it != tileOf.end()) {
        rewriter.modifyOpInPlace(tiled, [&] { operand.set(it->second); });
        continue;
      }
      auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
      if (!slice)
        continue;
      auto it = tileOf.find(slice.getSource().getDefiningOp());
      if (it == tileOf.end())
        continue;
      if (it->second.getType() != operand.get().getType())
        return op.emitError() << "a row kernel's op reads another one's result in another shape";
      rewriter.modifyOpInPlace(tiled, [&] { operand.set(it->second); });
      if (slice->use_empty())
        rewriter.eraseOp(slice);
    }
    OpOperand &init = tiled.getDpsInitsMutable()[0];
    // (Temporaries before the op that writes them.)
    rewriter.setInsertionPoint(tiled);
    auto replaceInit = [&](Value v) {
      Operation *old = init.get().getDefiningOp();
      rewriter.modifyOpInPlace(tiled, [&] { init.set(v); });
      if (old && old->use_empty())
        rewriter.eraseOp(old);
    };
    auto elementwiseTiles = [&](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> registers(shape.size(), 1);
      registers.back() = rowTile(shape.back(), lanes);
      for (unsigned d = 0; d < shape.size(); ++d)
        if (registers[d] >= shape[d])
          registers[d] = 0;
      return registers;
    };
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    bool lastOp = op == k.ops.back();
    switch (kind) {
    case RowOpKind::Full:
      if (narrows && lastOp)
        replaceInit(output);
      else if (firstFull)
        replaceInit(narrows ? chunkTemporary(rewriter, loc, entry, RankedTensorType::get(chunkShape, element)) : output);
      firstFull = false;
      tileOf[op] = tiled->getResult(0);
      tiles.push_back({tiled, elementwiseTiles(chunkShape)});
      break;
    case RowOpKind::Row:
      replaceInit(chunkTemporary(rewriter, loc, entry, RankedTensorType::get(chunkRows, element)));
      tileOf[op] = tiled->getResult(0);
      tiles.push_back({tiled, elementwiseTiles(chunkRows)});
      break;
    case RowOpKind::Reduce: {
      auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      Value temporary = chunkTemporary(rewriter, loc, entry, RankedTensorType::get(chunkRows, element));
      Value initial = fill.getInputs()[0];
      auto start = linalg::FillOp::create(rewriter, loc, ValueRange{initial}, ValueRange{temporary});
      replaceInit(start.getResult(0));
      if (!chunkRows.empty())
        tiles.push_back({start, elementwiseTiles(chunkRows)});
      int64_t w = partialWidth(k.shape.back(), lanes);
      SmallVector<int64_t> byRow(rank, 1);
      for (unsigned d = 0; d < rows; ++d)
        if (chunkShape[d] == 1)
          byRow[d] = 0;
      if (!w) {
        // One row at a time, one element at a time (a single row stays one loop).
        tileOf[op] = tiled->getResult(0);
        if (rows > 0)
          tiles.push_back({tiled, byRow});
        break;
      }
      SmallVector<int64_t> partialShape(chunkRows);
      partialShape.push_back(w);
      Value partialInit = chunkTemporary(rewriter, loc, entry, RankedTensorType::get(partialShape, element));
      auto [partialStart, partial, merge] = splitRows(rewriter, tiled, w, partialInit);
      tiles.push_back({partialStart, elementwiseTiles(partialShape)});
      // The partial sums: one row and one step of w at a time, w accumulated in registers.
      SmallVector<int64_t> partialTiles(byRow);
      partialTiles.back() = 1; // (n >= 2w: at least two steps)
      partialTiles.push_back(0);
      tiles.push_back({partial, partialTiles});
      SmallVector<int64_t> mergeTiles(byRow);
      mergeTiles.back() = 0;
      tiles.push_back({merge, mergeTiles});
      tileOf[op] = merge->getResult(0);
      break;
    }
    }
    last = tileOf[op];
    rewriter.setInsertionPointToEnd(loop.getBody());
  }
  Value updated =
      tensor::InsertSliceOp::create(rewriter, loc, last, loop.getRegionIterArgs()[0], offsets, sizes, strides);
  scf::YieldOp::create(rewriter, loc, updated);
  rewriter.replaceAllUsesWith(k.ops.back()->getResult(0), loop.getResult(0));
  for (linalg::GenericOp op : llvm::reverse(k.ops))
    rewriter.eraseOp(op);
  return workgroups;
}

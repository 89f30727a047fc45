//===- PackMatmulWeights.cpp - weights in the layout the matmul kernel reads --===//
//
// A matmul kernel's register tile reads, at every reduction step k, one row of `nr` columns of
// its weights B[k, n0 .. n0+nr). In B's own layout those rows are N floats apart (a power of
// two for most layers), so the rows a tile walks through fall into a handful of cache sets and
// evict each other; a Gemm with transB reads B by columns, one float per row. Constant weights
// are therefore stored packed, as mmt4d-style panels: P[no][k][ni] = B[k][no * nr + ni], each
// panel a contiguous K x nr block. The contraction becomes one over (..., m, no, ni, k) writing
// its result viewed as [..., M, N/nr, nr] (an expand_shape of the [..., M, N] result, which is
// contiguous, so the graph sees a view):
//
//   C[..., m, no, ni] += A[..., m, k] * P[no, k, ni]
//
// A zero fill or a bias broadcast initializing the accumulator is rebuilt in the packed shape,
// so it still fuses into the kernel. The panel width nr is 32, 16 or 8, whichever divides N
// first; other widths are left unpacked. A run-time B[K][N] or B[N][K] is packed the same way
// by an elementwise op before the contraction (packsRunTimeB says when that pays), which
// dispatch formation runs as a kernel of its own or, for readers of at most 128 rows, inside
// each reader's kernel (packsPanelsInKernel); a batched
// run-time B read with k innermost (attention's Q x K^T) is transposed by a kernel instead.
// For a target with int8 dot products, constant int8 weights of an unsigned-by-signed int8
// contraction are packed with groups along k innermost: of four (VNNI) or two (vpmaddwd pairs;
// DotGroups.h).
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "Dialect/Functions.h"
#include "Transforms/DotGroups.h"
#include "Transforms/PackedLayout.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_PACKMATMULWEIGHTS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Whether a run-time B[K][N] read by `rows` rows of A is packed first: one more pass over B
// (K x N read and written) against contiguous rows for the register tiles. Measured on a Zen 3
// (GEMM GFLOP/s, unpacked -> packed): 32x512x512 71 -> 60, 48x768x768 79 -> 71, 64x512x512
// 64 -> 74, 64x768x768 70 -> 73, 512^3 60 -> 92; where B's rows are a multiple of 4 KiB apart,
// so that a column of B falls into one L1 set, already 32x1024x1024 40 -> 56 and 32x3072x768
// 33 -> 48 (16 rows: even). A B read with k innermost is always repacked (it used to be
// transposed, which costs the same).
bool packsRunTimeB(int64_t rows, int64_t N) {
  constexpr int64_t kSetStride = 4096; // L1 sets x line size on the x86 cores measured
  return rows >= 64 || (rows >= 32 && (N * static_cast<int64_t>(sizeof(float))) % kSetStride == 0);
}

// Rows of the contraction (the product of its parallel loops but n): how often each element of
// B is read.
int64_t contractionRows(linalg::GenericOp op, unsigned n) {
  int64_t rows = 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != n && op.getIteratorTypesArray()[d] == utils::IteratorType::parallel)
      rows *= ranges[d];
  return rows;
}

// B's panels P[no][k][ni] = B[k][no * nr + ni] (kMajor) or B[no * nr + ni][k], computed at run
// time: B viewed as [K][NO][nr] (or [NO][nr][K]) and permuted by an elementwise kernel of its own.
Value packAtRunTime(RewriterBase &rewriter, Location loc, Value b, bool kMajor, int64_t K, int64_t NO, int64_t nr) {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<int64_t> viewShape = kMajor ? SmallVector<int64_t>{K, NO, nr} : SmallVector<int64_t>{NO, nr, K};
  SmallVector<ReassociationIndices> groups =
      kMajor ? SmallVector<ReassociationIndices>{{0}, {1, 2}} : SmallVector<ReassociationIndices>{{0, 1}, {2}};
  Value view = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(viewShape, rewriter.getF32Type()), b,
                                             groups);
  // With B[K][N], loops (k, no, ni) in B's order: B streams from memory and the panels are
  // written as NO streams of whole lines (loops in the panels' order read B down its columns, a
  // new page every step: 10.7 GB/s on a Zen 3, 15 GB/s this way). With B[N][K] (k innermost,
  // a transpose either way), loops (no, k, ni) in the panels' order.
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx), d2 = getAffineDimExpr(2, ctx);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap read = kMajor ? identity : AffineMap::get(3, 0, {d0, d2, d1}, ctx);
  AffineMap write = kMajor ? AffineMap::get(3, 0, {d1, d0, d2}, ctx) : identity;
  return permutedCopy(rewriter, loc, view, {NO, K, nr}, read, write);
}

LogicalResult pack(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel) {
  auto loops = columnAndReduction(op);
  if (!loops)
    return failure();
  unsigned n = loops->first, k = loops->second;
  // The weights: an input indexed by exactly (k, n) or (n, k), a constant (packed at compile
  // time) or else a run-time matrix (packed by a kernel before the contraction).
  OpOperand *weights = nullptr;
  DenseElementsAttr values;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.getNumResults() != 2 || !map.isProjectedPermutation() ||
        !((map.getDimPosition(0) == k && map.getDimPosition(1) == n) ||
          (map.getDimPosition(0) == n && map.getDimPosition(1) == k)))
      continue;
    auto cst = in->get().getDefiningOp<arith::ConstantOp>();
    auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
    if (dense && dense.getElementType().isF32()) {
      weights = in;
      values = dense;
    } else if (!weights && !cst && cast<ShapedType>(in->get().getType()).getElementType().isF32()) {
      weights = in;
    }
  }
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!weights || !outMap.isProjectedPermutation() || outMap.getNumResults() == 0 ||
      outMap.getDimPosition(outMap.getNumResults() - 1) != n)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t N = ranges[n], K = ranges[k];
  int64_t nr = panelWidth(N, maxPanel);
  if (!nr)
    return failure();
  bool kMajor = op.getMatchingIndexingMap(weights).getDimPosition(0) == k;
  if (!values && kMajor && !packsRunTimeB(contractionRows(op, n), N))
    return failure();
  int64_t NO = N / nr;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value packedB;
  if (values) {
    // P[no][k][ni] = B[k][no * nr + ni].
    std::vector<float> raw = denseFloats(values);
    std::vector<float> packed(raw.size());
    for (int64_t no = 0; no < NO; ++no)
      for (int64_t kk = 0; kk < K; ++kk)
        for (int64_t ni = 0; ni < nr; ++ni) {
          int64_t col = no * nr + ni;
          packed[(no * K + kk) * nr + ni] = kMajor ? raw[kk * N + col] : raw[col * K + kk];
        }
    auto packedType = RankedTensorType::get({NO, K, nr}, rewriter.getF32Type());
    packedB = arith::ConstantOp::create(rewriter, loc, packedType,
                                        DenseElementsAttr::get(packedType, ArrayRef<float>(packed)));
  } else {
    packedB = packAtRunTime(rewriter, loc, weights->get(), kMajor, K, NO, nr);
  }

  // Loops: old loop n becomes `no`, a new loop `ni` follows it; later loops shift by one.
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops() + 1;
  auto shifted = [&](unsigned d) { return getAffineDimExpr(d <= n ? d : d + 1, ctx); };
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in == weights) {
      maps.push_back(AffineMap::get(numLoops, 0, {getAffineDimExpr(n, ctx), shifted(k), getAffineDimExpr(n + 1, ctx)}, ctx));
      inputs.push_back(packedB);
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(in);
    SmallVector<AffineExpr> exprs;
    for (unsigned j = 0; j < map.getNumResults(); ++j)
      exprs.push_back(shifted(map.getDimPosition(j)));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
    inputs.push_back(in->get());
  }
  SmallVector<AffineExpr> outExprs;
  for (unsigned j = 0; j + 1 < outMap.getNumResults(); ++j)
    outExprs.push_back(shifted(outMap.getDimPosition(j)));
  outExprs.push_back(getAffineDimExpr(n, ctx));
  outExprs.push_back(getAffineDimExpr(n + 1, ctx));
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + n + 1, utils::IteratorType::parallel);

  Value init = packedInit(rewriter, loc, op.getDpsInits()[0], nr);
  auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
                                           maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), generic.getRegion(), generic.getRegion().end());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, resultType, generic->getResult(0),
                                                 splitLastDim(resultType.getRank()));
  rewriter.replaceOp(op, result);
  return success();
}

// A contraction whose run-time B is read with k innermost (a batched Q x K^T) reads its
// register tile's row of nr columns from nr rows of B: B is transposed first by an elementwise
// kernel (K x N reads and writes, against M x N x K multiply-adds), so that its columns are
// contiguous.
LogicalResult transposeRunTimeB(RewriterBase &rewriter, linalg::GenericOp op) {
  auto loops = columnAndReduction(op);
  if (!loops)
    return failure();
  unsigned n = loops->first, k = loops->second;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    unsigned rank = map.getNumResults();
    if (rank < 2 || in->get().getDefiningOp<arith::ConstantOp>() || !map.isProjectedPermutation() ||
        map.getDimPosition(rank - 1) != k)
      continue;
    std::optional<unsigned> pn;
    for (unsigned j = 0; j < rank; ++j)
      if (map.getDimPosition(j) == n)
        pn = j;
    if (!pn)
      continue;
    auto type = cast<RankedTensorType>(in->get().getType());
    // Swap B's n and k dimensions (k is the last): Bt[..k.., n] = B[..n.., k].
    SmallVector<int64_t> shape(type.getShape());
    std::swap(shape[rank - 1], shape[*pn]);
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> readExprs;
    for (unsigned j = 0; j < rank; ++j)
      readExprs.push_back(getAffineDimExpr(j, ctx));
    std::swap(readExprs[rank - 1], readExprs[*pn]);
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value transposed = permutedCopy(rewriter, loc, in->get(), shape, AffineMap::get(rank, 0, readExprs, ctx),
                                    AffineMap::getMultiDimIdentityMap(rank, ctx));
    SmallVector<AffineExpr> exprs;
    for (unsigned j = 0; j < rank; ++j)
      exprs.push_back(map.getResult(j));
    std::swap(exprs[rank - 1], exprs[*pn]);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[in->getOperandNumber()] = AffineMap::get(map.getNumDims(), 0, exprs, ctx);
    rewriter.modifyOpInPlace(op, [&] {
      in->set(transposed);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
  return failure();
}

struct PackMatmulWeightsPass : public mlir::hexir::impl::PackMatmulWeightsBase<PackMatmulWeightsPass> {
  using PackMatmulWeightsBase::PackMatmulWeightsBase;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      SmallVector<linalg::GenericOp> ops;
      fn.walk([&](linalg::GenericOp op) { ops.push_back(op); });
      for (linalg::GenericOp op : ops) {
        if (dotGroups && succeeded(packMatmulDotGroups(rewriter, op, maxPanel, int8Group)))
          continue;
        if (failed(pack(rewriter, op, maxPanel)))
          (void)transposeRunTimeB(rewriter, op);
      }
    }
  }
};

} // namespace

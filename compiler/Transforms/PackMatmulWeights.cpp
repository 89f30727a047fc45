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
// first; other widths are left unpacked. A run-time B read with k innermost (Q x K^T) is
// transposed by a kernel of its own instead.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
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

// The column loop n and the reduction loop k of a contraction with one of each.
std::optional<std::pair<unsigned, unsigned>> columnAndReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op) || op.getNumDpsInits() != 1)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  return std::make_pair(dims->n[0], dims->k[0]);
}

LogicalResult pack(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel) {
  auto loops = columnAndReduction(op);
  if (!loops)
    return failure();
  unsigned n = loops->first, k = loops->second;
  // The weights: a constant input indexed by exactly (k, n) or (n, k).
  OpOperand *weights = nullptr;
  DenseElementsAttr values;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    auto cst = in->get().getDefiningOp<arith::ConstantOp>();
    auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
    if (dense && dense.getElementType().isF32() && map.getNumResults() == 2 && map.isProjectedPermutation() &&
        ((map.getDimPosition(0) == k && map.getDimPosition(1) == n) ||
         (map.getDimPosition(0) == n && map.getDimPosition(1) == k))) {
      weights = in;
      values = dense;
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

  // P[no][k][ni] = B[k][no * nr + ni].
  std::vector<float> raw = denseFloats(values);
  std::vector<float> packed(raw.size());
  int64_t NO = N / nr;
  for (int64_t no = 0; no < NO; ++no)
    for (int64_t kk = 0; kk < K; ++kk)
      for (int64_t ni = 0; ni < nr; ++ni) {
        int64_t col = no * nr + ni;
        packed[(no * K + kk) * nr + ni] = kMajor ? raw[kk * N + col] : raw[col * K + kk];
      }
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto packedType = RankedTensorType::get({NO, K, nr}, rewriter.getF32Type());
  Value packedB = arith::ConstantOp::create(rewriter, loc, packedType,
                                            DenseElementsAttr::get(packedType, ArrayRef<float>(packed)));

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
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    SmallVector<AffineMap> tmaps = {AffineMap::get(rank, 0, readExprs, ctx), AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value transposed = linalg::GenericOp::create(rewriter, loc, TypeRange{empty.getType()}, ValueRange{in->get()},
                                                 ValueRange{empty}, tmaps, iterators,
                                                 [](OpBuilder &b, Location l, ValueRange args) {
                                                   linalg::YieldOp::create(b, l, args[0]);
                                                 })
                           ->getResult(0);
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
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isDeclaration() || fn->hasAttr(mlir::hexir::kKernelAttrName))
        continue;
      SmallVector<linalg::GenericOp> ops;
      fn.walk([&](linalg::GenericOp op) { ops.push_back(op); });
      for (linalg::GenericOp op : ops)
        if (failed(pack(rewriter, op, maxPanel)))
          (void)transposeRunTimeB(rewriter, op);
    }
  }
};

} // namespace

//===- SinkPackedViews.cpp - epilogues read packed results directly -------===//
//
// A packed matmul or convolution (PackMatmulWeights, PackConvFilters) writes [..., N/nr, nr]
// and the graph reads it through a collapse_shape view as [..., N]. An elementwise op reading
// that view (a bias add, an activation, a residual add) is rewritten to run over the packed
// shape instead, its other operands viewed the same way, and the view moves below it (upstream
// reshape-by-expansion fusion). The elementwise op then reads the contraction's result itself,
// so dispatch formation can make it the contraction's epilogue: one kernel, no intermediate
// tensor. A pad of such a view becomes a view of the pad (over the packed shape), so the pad's
// kernel can compute the convolution and its epilogue straight into the padded tensor, unless
// a depthwise convolution or pooling reads the pad and computes the border itself (then the
// pad joins that kernel and no padded tensor exists).
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "Dialect/Functions.h"
#include "Transforms/KernelClassification.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_SINKPACKEDVIEWS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using mlir::hexir::allParallel;

namespace {

// The view of a packed result (read by nothing else) moves below an elementwise op reading it
// (which then reads the contraction's result: its epilogue), and the view of a packed result
// or of its epilogue moves below a pad (whose kernel then computes them into the padded
// tensor; upstream checks that the pad leaves the collapsed dimensions alone).
bool sinkThrough(OpOperand *operand, bool windowBorders) {
  // (Read only by this op; a SiLU reads it twice.)
  auto view = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!view || llvm::any_of(view->getUsers(), [&](Operation *user) { return user != operand->getOwner(); }))
    return false;
  auto producer = view.getSrc().getDefiningOp<linalg::LinalgOp>();
  if (!producer || !producer->hasOneUse())
    return false;
  if (auto pad = dyn_cast<tensor::PadOp>(operand->getOwner())) {
    // A depthwise convolution or pooling that computes its border itself reads the unpadded
    // view: the pad disappears into it (no padded tensor at all).
    auto window = pad->hasOneUse() ? dyn_cast<linalg::LinalgOp>(*pad->getUsers().begin()) : nullptr;
    return !(windowBorders && window && mlir::hexir::borderPad(window) == pad);
  }
  auto reader = dyn_cast<linalg::GenericOp>(operand->getOwner());
  return reader && allParallel(reader) && !allParallel(producer);
}

// `attr` with its dimension `dim` extended to `size` by repeating its last element (a
// per-channel constant for the padding channels: they compute as the last real one does, on
// the data's padding lanes, which are zero).
DenseElementsAttr padByRepeating(DenseElementsAttr attr, unsigned dim, int64_t size) {
  auto type = cast<RankedTensorType>(attr.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t old = shape[dim];
  shape[dim] = size;
  SmallVector<Attribute> values(attr.getValues<Attribute>());
  SmallVector<Attribute> padded;
  int64_t inner = 1;
  for (unsigned d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t outer = type.getNumElements() / (old * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < size; ++i)
      for (int64_t k = 0; k < inner; ++k)
        padded.push_back(values[(o * old + std::min(i, old - 1)) * inner + k]);
  return DenseElementsAttr::get(RankedTensorType::get(shape, type.getElementType()), padded);
}

// A packed contraction's or convolution's result whose columns were padded to whole vectors
// (24 channels in panels of 16: [..., 32]) is sliced back to its columns before its elementwise
// reader (a requantization to int8, an activation). The reader moves above the slice instead,
// computing the padding columns too, its per-column constants extended by their last value:
// it then reads the contraction's result itself (its epilogue, a narrowing one for int8) and
// the slice copies its narrow result. Readers of other run-time tensors along the columns (a
// residual add) stay below the slice.
// Whether `op`'s body computes only arith and math values that cannot trap on any input: no
// index-based reads, no integer division or remainder by a value that is not a constant (the
// padding lanes would divide by zero).
bool safeOnPadding(linalg::GenericOp op) {
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return false;
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp,
            arith::FloorDivSIOp>(inner) &&
        !matchPattern(inner.getOperand(1), m_Constant()))
      return false;
  }
  return true;
}

struct ElementwiseAboveSlice : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!allParallel(op) || !safeOnPadding(op) || op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
        !op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
      return failure();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    unsigned rank = outType.getRank(), last = rank - 1;
    OpOperand *sliced = nullptr;
    tensor::ExtractSliceOp slice;
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto s = in->get().getDefiningOp<tensor::ExtractSliceOp>();
      if (!s || sliced || !s->hasOneUse() || !op.getMatchingIndexingMap(in).isIdentity())
        continue;
      auto srcType = s.getSourceType();
      if (!s.hasUnitStride() || !s.hasZeroOffset() || !srcType.hasStaticShape() || srcType.getRank() != rank ||
          s.getResultType().getShape() != outType.getShape())
        continue;
      bool lastOnly = true;
      for (unsigned d = 0; d < last; ++d)
        lastOnly &= srcType.getDimSize(d) == outType.getDimSize(d);
      // (The padded result read by nothing else: a slice of a fused product split several ways
      // would compute every part.)
      Value src = s.getSource();
      if (!src.hasOneUse())
        continue;
      if (auto view = src.getDefiningOp<tensor::CollapseShapeOp>()) {
        src = view.getSrc();
        if (!src.hasOneUse())
          continue;
      }
      auto producer = src.getDefiningOp<linalg::LinalgOp>();
      if (!lastOnly || !producer || allParallel(producer))
        continue;
      sliced = in;
      slice = s;
    }
    if (!sliced)
      return failure();
    int64_t width = slice.getSourceType().getDimSize(last);
    // The other operands along the columns: constants only, extended to the padded width
    // (all checked before anything is created: a pattern that fails changes nothing).
    SmallVector<std::pair<DenseElementsAttr, unsigned>> extended;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (in == sliced)
        continue;
      AffineMap map = op.getMatchingIndexingMap(in);
      std::optional<unsigned> column;
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        if (!map.getResult(r).isFunctionOfDim(last))
          continue;
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
        if (!dim || column)
          return failure();
        column = r;
      }
      DenseElementsAttr attr;
      if (column && !matchPattern(in->get(), m_Constant(&attr)))
        return failure();
      extended.push_back({column ? attr : DenseElementsAttr(), column.value_or(0)});
    }
    SmallVector<Value> inputs;
    Location loc = op.getLoc();
    auto next = extended.begin();
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (in == sliced) {
        inputs.push_back(slice.getSource());
        continue;
      }
      auto [attr, column] = *next++;
      inputs.push_back(attr ? arith::ConstantOp::create(rewriter, loc, padByRepeating(attr, column, width)).getResult()
                            : in->get());
    }
    SmallVector<int64_t> shape(outType.getShape());
    shape[last] = width;
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, outType.getElementType());
    auto wide = linalg::GenericOp::create(rewriter, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty},
                                          op.getIndexingMapsArray(), op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op.getRegion(), wide.getRegion(), wide.getRegion().end());
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, outType, wide->getResult(0), slice.getMixedOffsets(),
                                                        slice.getMixedSizes(), slice.getMixedStrides());
    return success();
  }
};

struct SinkPackedViewsPass : public mlir::hexir::impl::SinkPackedViewsBase<SinkPackedViewsPass> {
  using SinkPackedViewsBase::SinkPackedViewsBase;

  void runOnOperation() override {
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      RewritePatternSet patterns(&getContext());
      linalg::populateFoldReshapeOpsByExpansionPatterns(
          patterns, [this](OpOperand *operand) { return sinkThrough(operand, windowBorders); });
      patterns.add<ElementwiseAboveSlice>(&getContext());
      // A view of tensor.empty (the expanded op's init) is an empty tensor of the new shape.
      tensor::populateFoldTensorEmptyPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns)))) {
        fn.emitError() << "moving packed views below their readers did not converge (an internal error: please report it)";
        return signalPassFailure();
      }
    }
  }
};

} // namespace

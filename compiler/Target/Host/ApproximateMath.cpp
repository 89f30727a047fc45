//===- ApproximateMath.cpp - inline polynomial math in kernels ------------===//
//
// Kernels must not call libm (they are loaded into any process without it being linked), so
// transcendental ops become polynomial approximations from MLIR's Math dialect transforms.
// Their f32 error is a few ulp, far below the 1e-5 relative tolerance of the end-to-end tests.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

// a * b + c as a multiply and an add (rounded twice, as a CPU without FMA computes it).
struct UnfuseFma : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op, PatternRewriter &rewriter) const override {
    Value product = arith::MulFOp::create(rewriter, op.getLoc(), op.getA(), op.getB(), op.getFastmath());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, product, op.getC(), op.getFastmath());
    return success();
  }
};

// floor and ceil without SSE4.1's roundss: through an integer (|x| < 2^23; larger floats are
// integers already, and NaN compares false and stays NaN), then one step down (floor) or up
// (ceil) where the conversion rounded the other way.
template <typename OpTy, bool kCeil>
struct ExpandRounding : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type elem = getElementTypeOrSelf(type);
    if (!elem.isF32())
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    auto splat = [&](Attribute a) -> Value {
      if (auto shaped = dyn_cast<ShapedType>(type))
        return arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(shaped, a));
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(a));
    };
    Type intType = rewriter.getI32Type();
    if (auto shaped = dyn_cast<ShapedType>(type))
      intType = shaped.clone(rewriter.getI32Type());
    Value truncated = arith::SIToFPOp::create(rewriter, loc, type, arith::FPToSIOp::create(rewriter, loc, intType, x));
    Value one = splat(rewriter.getF32FloatAttr(1.0f));
    Value adjusted;
    if (kCeil) {
      Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, truncated, x);
      adjusted = arith::SelectOp::create(rewriter, loc, below, arith::AddFOp::create(rewriter, loc, truncated, one),
                                         truncated);
    } else {
      Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, truncated, x);
      adjusted = arith::SelectOp::create(rewriter, loc, above, arith::SubFOp::create(rewriter, loc, truncated, one),
                                         truncated);
    }
    Value magnitude = math::AbsFOp::create(rewriter, loc, x);
    Value small = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, magnitude,
                                        splat(rewriter.getF32FloatAttr(8388608.0f)));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, adjusted, x);
    return success();
  }
};

struct ApproximateMathPass : public mlir::hexir::impl::ApproximateMathBase<ApproximateMathPass> {
  using ApproximateMathBase::ApproximateMathBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // No AVX2-specific forms: they would tie kernels to x86vector intrinsics.
    populateMathPolynomialApproximationPatterns(patterns, MathPolynomialApproximationOptions{});
    if (!fma)
      patterns.add<UnfuseFma>(&getContext());
    if (!rounding)
      patterns.add<ExpandRounding<math::FloorOp, false>, ExpandRounding<math::CeilOp, true>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

//===- ApproximateMath.cpp - inline polynomial math in kernels ------------===//
//
// Kernels must not call libm (they are loaded into any process without it being linked), so
// transcendental ops become polynomial approximations from MLIR's Math dialect transforms.
// Their f32 error is a few ulp, far below the 1e-5 relative tolerance of the end-to-end tests.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
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

// A logistic's c / (1 + exp(y)) (sigmoid, SiLU) as the reciprocal estimate the CPU computes
// fast (vrcp14ps and one Newton step, about 1 ulp) instead of a division (vdivps: 10-16 cycles
// per AVX-512 vector, more than a 1x1 convolution over 16 channels takes for the same tile).
// LLVM uses the estimate only for divisors it may assume finite, so exp(y) is capped at 1e30
// first: 1 / (1 + 1e30) is 1e-30 where the logistic underflows anyway.
struct LogisticReciprocal : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::DivFOp op, PatternRewriter &rewriter) const override {
    arith::FastMathFlags wanted = arith::FastMathFlags::arcp | arith::FastMathFlags::ninf;
    if (!isa<VectorType>(op.getType()) || arith::bitEnumContainsAll(op.getFastmath(), wanted) ||
        !matchPattern(op.getLhs(), m_Constant()))
      return failure();
    auto sum = op.getRhs().getDefiningOp<arith::AddFOp>();
    if (!sum)
      return failure();
    Value exp = sum.getLhs(), other = sum.getRhs();
    if (!exp.getDefiningOp<math::ExpOp>())
      std::swap(exp, other);
    FloatAttr one;
    DenseElementsAttr ones;
    bool isOne = (matchPattern(other, m_Constant(&one)) && one.getValue().isExactlyValue(1.0)) ||
                 (matchPattern(other, m_Constant(&ones)) && ones.isSplat() &&
                  ones.getSplatValue<APFloat>().isExactlyValue(1.0));
    if (!exp.getDefiningOp<math::ExpOp>() || !isOne)
      return failure();
    Location loc = op.getLoc();
    auto type = cast<VectorType>(op.getType());
    Value cap = arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(type, rewriter.getF32FloatAttr(1e30f)));
    Value capped = arith::MinimumFOp::create(rewriter, loc, exp, cap);
    Value divisor = arith::AddFOp::create(rewriter, loc, capped, other);
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, op.getLhs(), divisor,
                                               arith::FastMathFlagsAttr::get(rewriter.getContext(), wanted));
    return success();
  }
};

struct ApproximateMathPass : public mlir::hexir::impl::ApproximateMathBase<ApproximateMathPass> {
  using ApproximateMathBase::ApproximateMathBase;

  void runOnOperation() override {
    {
      // (Before exp becomes a polynomial.)
      RewritePatternSet patterns(&getContext());
      patterns.add<LogisticReciprocal>(&getContext());
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    // No AVX2-specific forms: they would tie kernels to x86vector intrinsics.
    populateMathPolynomialApproximationPatterns(patterns, MathPolynomialApproximationOptions{});
    if (!fma)
      patterns.add<UnfuseFma>(&getContext());
    if (!rounding)
      patterns.add<ExpandRounding<math::FloorOp, false>, ExpandRounding<math::CeilOp, true>>(&getContext());
    if (!bf16)
      arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

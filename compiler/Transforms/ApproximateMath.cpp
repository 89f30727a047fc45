//===- ApproximateMath.cpp - inline polynomial math in kernels ------------===//
//
// Kernels must not call libm (they are loaded into any process without it being linked), so
// transcendental ops become polynomial approximations from MLIR's Math dialect transforms.
// Their f32 error is a few ulp, far below the 1e-5 relative tolerance of the end-to-end tests.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

struct ApproximateMathPass : public mlir::hexir::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // No AVX2-specific forms: they would tie kernels to x86vector intrinsics.
    populateMathPolynomialApproximationPatterns(patterns, MathPolynomialApproximationOptions{});
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

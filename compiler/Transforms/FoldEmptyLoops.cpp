//===- FoldEmptyLoops.cpp - ops that run no iteration ---------------------===//
//
// A linalg op with a loop of extent 0 computes nothing: its result is its accumulator's
// initial value. A reduction over an empty axis (ReduceSum of a [3, 0] tensor, a matmul over
// K = 0) is its neutral start, an op with an empty result is its (empty) init. Folding them on
// the graph means no kernel ever has a loop without iterations, which the kernel generator
// does not expect.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_FOLDEMPTYLOOPS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

struct FoldEmptyLoop : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != op.getNumDpsInits() ||
        !llvm::is_contained(op.getStaticLoopRanges(), 0))
      return failure();
    // Each result has its init's type (linalg ops on tensors), so the init replaces it.
    rewriter.replaceOp(op, op.getDpsInits());
    return success();
  }
};

struct FoldEmptyLoopsPass : public mlir::hexir::impl::FoldEmptyLoopsBase<FoldEmptyLoopsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldEmptyLoop>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

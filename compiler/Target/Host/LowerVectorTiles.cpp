//===- LowerVectorTiles.cpp - register tiles to FMA code ------------------===//
//
// After bufferization, the vector code of TileAndVectorize reads and writes its accumulator
// tile at every reduction step. This pass keeps it in registers and lowers the contractions:
//   1. fold subviews into the transfers and drop leading unit dimensions (hoisting cannot see
//      through a memref.subview, and a 1-D convolution tile has a unit batch dimension);
//   2. hoist the accumulator's transfer_read/transfer_write out of the reduction loops;
//   3. vector.contract -> outer products -> vector.fma over rows, transfers of rank 1.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_LOWERVECTORTILES
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

void addCanonicalizations(RewritePatternSet &patterns, MLIRContext *ctx) {
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
}

struct LowerVectorTilesPass : public mlir::hexir::impl::LowerVectorTilesBase<LowerVectorTilesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      bool hasVectors = false;
      fn.walk([&](vector::TransferReadOp) { hasVectors = true; });
      fn.walk([&](vector::TransferWriteOp) { hasVectors = true; });
      if (!hasVectors)
        continue;
      {
        RewritePatternSet patterns(ctx);
        memref::populateFoldMemRefAliasOpPatterns(patterns);
        vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
        addCanonicalizations(patterns, ctx);
        if (failed(applyPatternsGreedily(fn, std::move(patterns))))
          return signalPassFailure();
      }
      IRRewriter rewriter(ctx);
      DominanceInfo dominance(fn);
      eliminateCommonSubExpressions(rewriter, dominance, fn);
      linalg::hoistRedundantVectorTransfers(fn, /*verifyNonZeroTrip=*/true);
      {
        RewritePatternSet patterns(ctx);
        vector::populateVectorContractLoweringPatterns(patterns, vector::VectorContractLowering::OuterProduct);
        vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
        vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
        vector::populateVectorOuterProductLoweringPatterns(patterns);
        vector::populateVectorTransposeLoweringPatterns(patterns, vector::VectorTransposeLowering::EltWise);
        vector::populateVectorBroadcastLoweringPatterns(patterns);
        vector::populateVectorShapeCastLoweringPatterns(patterns);
        vector::populateVectorMultiReductionLoweringPatterns(patterns,
                                                             vector::VectorMultiReductionLowering::InnerParallel);
        if (failed(applyPatternsGreedily(fn, std::move(patterns))))
          return signalPassFailure();
      }
    }
  }
};

} // namespace

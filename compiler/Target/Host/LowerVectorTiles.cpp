//===- LowerVectorTiles.cpp - register tiles to FMA code ------------------===//
//
// After bufferization, the vector code of TileAndVectorize reads and writes its accumulator
// tile at every reduction step. This pass keeps it in registers and lowers the contractions:
//   1. fold subviews into the transfers and drop leading unit dimensions (hoisting cannot see
//      through a memref.subview, and a 1-D convolution tile has a unit batch dimension);
//   2. hoist the accumulator's transfer_read/transfer_write out of the reduction loops, and
//      forward a register tile's bias and accumulators through memory to their readers;
//   3. vector.contract -> outer products -> vector.fma over rows, transfers of rank 1.
// Before all that, with VNNI (dot-bits), int8 contractions over groups of four become dot
// products, without it (pair-bits) those over pairs vpmaddwd, and with AVX512-BF16
// (bf16-dot-bits) bf16 ones over pairs (DotProducts.h).
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"
#include "Target/Host/DotProducts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
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

// Collapsed rows (TileAndVectorize's collapseRows) read and write collapsed views of the
// kernel's buffers. Folded into the transfers, a register tile's rows would be split again
// into the image's rows and columns, and its n-D transfers into loops of one accumulator each;
// the same view as a reinterpret_cast of the buffer is left alone.
void hideCollapsedViews(func::FuncOp fn) {
  IRRewriter rewriter(fn.getContext());
  fn.walk([&](memref::CollapseShapeOp collapse) {
    MemRefType source = collapse.getSrcType(), result = collapse.getResultType();
    if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity() || !result.hasStaticShape())
      return;
    SmallVector<int64_t> strides(result.getRank(), 1);
    for (int64_t d = result.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * result.getDimSize(d + 1);
    rewriter.setInsertionPoint(collapse);
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(collapse, result, collapse.getSrc(), 0, result.getShape(),
                                                           strides);
  });
}

struct LowerVectorTilesPass : public mlir::hexir::impl::LowerVectorTilesBase<LowerVectorTilesPass> {
  using LowerVectorTilesBase::LowerVectorTilesBase;
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
      hideCollapsedViews(fn);
      // (Only kernels with dot-product contractions, int32 or of bf16: the dot patterns flatten
      // narrow transfers too.)
      bool dotContractions = false;
      fn.walk([&](vector::ContractionOp op) {
        auto ext = op.getLhs().getDefiningOp<arith::ExtFOp>();
        dotContractions |= getElementTypeOrSelf(op.getAccType()).isInteger(32) ||
                           (ext && getElementTypeOrSelf(ext.getIn().getType()).isBF16());
      });
      if ((dotBits || pairBits || bf16DotBits) && dotContractions) {
        RewritePatternSet patterns(ctx);
        mlir::hexir::populateDotProductPatterns(patterns, dotBits, bf16DotBits, pairBits);
        if (failed(applyPatternsGreedily(fn, std::move(patterns))))
          return signalPassFailure();
      }
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
      // A register tile's bias and activation (blockLoops) meet its accumulators in memory:
      // forward the bias written before the reduction into its accumulators, the
      // accumulators written after it into the activation, and drop the overwritten writes.
      vector::transferOpflowOpt(rewriter, fn);
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

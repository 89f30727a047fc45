//===- FuseElementwise.cpp - chains of elementwise ops as one op ----------===//
//
// Dispatch formation makes one kernel per compute op, so every elementwise op of a chain (the
// Erf polynomial of a GELU, a SiLU's sigmoid and product, a softmax's subtract and exp) would
// write and read a whole tensor. Here an elementwise generic op is fused into the generic op
// that reads it when it has no other reader: one loop nest, no intermediate tensor.
// Contractions are never fused into (their body must stay a multiply-add for the vector
// kernels), and fusion never duplicates work (a producer with several readers stays).
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

struct FuseElementwisePass : public mlir::hexir::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      return producer && producer->hasOneUse() && consumer &&
             !linalg::isaContractionOpInterface(consumer);
    });
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isDeclaration() && !fn->hasAttr(mlir::hexir::kKernelAttrName) &&
          failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
  }
};

} // namespace

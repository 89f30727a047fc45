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

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_SINKPACKEDVIEWS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

bool allParallel(linalg::LinalgOp op) {
  return op && op.getNumParallelLoops() == op.getNumLoops();
}

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

struct SinkPackedViewsPass : public mlir::hexir::impl::SinkPackedViewsBase<SinkPackedViewsPass> {
  using SinkPackedViewsBase::SinkPackedViewsBase;

  void runOnOperation() override {
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      RewritePatternSet patterns(&getContext());
      linalg::populateFoldReshapeOpsByExpansionPatterns(
          patterns, [this](OpOperand *operand) { return sinkThrough(operand, windowBorders); });
      // A view of tensor.empty (the expanded op's init) is an empty tensor of the new shape.
      tensor::populateFoldTensorEmptyPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace

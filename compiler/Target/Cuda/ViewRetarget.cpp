//===- ViewRetarget.cpp - uses of a buffer moved to another of another layout -===//
#include "Target/Cuda/ViewRetarget.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hexir;

void mlir::hexir::retargetUse(RewriterBase &rewriter, OpOperand &use, Value replacement) {
  Operation *user = use.getOwner();
  auto sub = dyn_cast<memref::SubViewOp>(user);
  if (!sub || use.get() != sub.getSource()) {
    rewriter.modifyOpInPlace(user, [&] { use.set(replacement); });
    return;
  }
  rewriter.setInsertionPoint(sub);
  auto type = memref::SubViewOp::inferRankReducedResultType(sub.getType().getShape(),
                                                            cast<MemRefType>(replacement.getType()),
                                                            sub.getMixedOffsets(), sub.getMixedSizes(),
                                                            sub.getMixedStrides());
  auto remade = memref::SubViewOp::create(rewriter, sub.getLoc(), cast<MemRefType>(type), replacement,
                                          sub.getMixedOffsets(), sub.getMixedSizes(), sub.getMixedStrides());
  retargetUses(rewriter, sub.getResult(), remade.getResult());
  rewriter.eraseOp(sub);
}

void mlir::hexir::retargetUses(RewriterBase &rewriter, Value view, Value replacement) {
  for (OpOperand &use : llvm::make_early_inc_range(view.getUses()))
    retargetUse(rewriter, use, replacement);
}

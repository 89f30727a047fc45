//===- InPlaceAnalysis.cpp - which kernel outputs may overwrite inputs ----===//
#include "Driver/InPlaceAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

SmallVector<SmallVector<unsigned>> mlir::hexir::findInPlaceCandidates(func::FuncOp kernel) {
  SmallVector<SmallVector<unsigned>> result(kernel.getNumResults());
  if (kernel.isDeclaration())
    return result;
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  auto linalgOp = ret.getNumOperands() > 0 ? ret.getOperand(0).getDefiningOp<linalg::LinalgOp>() : nullptr;
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return result;
  // Every returned value must be a result of that one op, in order.
  for (auto [k, v] : llvm::enumerate(ret.getOperands()))
    if (v.getDefiningOp() != linalgOp.getOperation() || cast<OpResult>(v).getResultNumber() != k)
      return result;
  for (unsigned k = 0; k < kernel.getNumResults(); ++k) {
    OpOperand *init = linalgOp.getDpsInitOperand(k);
    if (!init->get().getDefiningOp<tensor::EmptyOp>())
      continue;
    AffineMap outMap = linalgOp.getMatchingIndexingMap(init);
    if (!outMap.isIdentity())
      continue;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      auto arg = dyn_cast<BlockArgument>(input->get());
      if (!arg || arg.getOwner() != &kernel.getBody().front())
        continue;
      if (arg.getType() != init->get().getType() || linalgOp.getMatchingIndexingMap(input) != outMap)
        continue;
      // Every read of the argument must be at the element being written.
      bool onlyIdentityReads = llvm::all_of(arg.getUses(), [&](OpOperand &use) {
        return use.getOwner() == linalgOp.getOperation() && linalgOp.isDpsInput(&use) &&
               linalgOp.getMatchingIndexingMap(&use) == outMap;
      });
      if (!onlyIdentityReads)
        continue;
      if (!llvm::is_contained(result[k], arg.getArgNumber()))
        result[k].push_back(arg.getArgNumber());
    }
  }
  return result;
}

//===- InPlaceAnalysis.cpp - which kernel outputs may overwrite inputs ----===//
#include "Planning/InPlaceAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

SmallVector<SmallVector<unsigned>> mlir::hexir::findInPlaceCandidates(func::FuncOp kernel) {
  SmallVector<SmallVector<unsigned>> result(kernel.getNumResults());
  if (kernel.isDeclaration())
    return result;
  Block &body = kernel.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto onlyUse = [&](Value v, Operation *user) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body && arg.hasOneUse() && *arg.getUsers().begin() == user;
  };
  // Update in place: tensor.insert_slice into an argument.
  if (ret.getNumOperands() == 1) {
    if (auto insert = ret.getOperand(0).getDefiningOp<tensor::InsertSliceOp>()) {
      if (onlyUse(insert.getDest(), insert) && insert.getSource() != insert.getDest())
        result[0].push_back(cast<BlockArgument>(insert.getDest()).getArgNumber());
      return result;
    }
  }
  auto linalgOp = ret.getNumOperands() > 0 ? ret.getOperand(0).getDefiningOp<linalg::LinalgOp>() : nullptr;
  if (linalgOp && linalgOp.hasPureTensorSemantics()) {
    // Update in place: the result's init is an argument used only there.
    for (unsigned k = 0; k < kernel.getNumResults() && k < linalgOp.getNumDpsInits(); ++k) {
      OpOperand *init = linalgOp.getDpsInitOperand(k);
      if (ret.getOperand(k) == linalgOp->getResult(k) && onlyUse(init->get(), linalgOp))
        result[k].push_back(cast<BlockArgument>(init->get()).getArgNumber());
    }
  }
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return result;
  // An epilogue reading what another compute op of the kernel wrote (a matmul's result) is
  // computed in place over that result, which is written into the output first: the output
  // may then not share a buffer with anything the epilogue still reads.
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    if (Operation *def = input->get().getDefiningOp(); def && isa<linalg::LinalgOp>(def))
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

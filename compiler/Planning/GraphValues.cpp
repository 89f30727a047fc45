//===- GraphValues.cpp - the values of a call_tir graph as memory ---------===//
#include "Planning/GraphValues.h"

using namespace mlir;

uint64_t mlir::hexir::byteSize(Type type) {
  auto t = cast<RankedTensorType>(type);
  return static_cast<uint64_t>(t.getNumElements()) * (t.getElementTypeBitWidth() / 8);
}

Value mlir::hexir::rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

void mlir::hexir::forEachReader(Value v, llvm::function_ref<void(Operation *)> fn) {
  SmallVector<Value> worklist = {v};
  while (!worklist.empty()) {
    Value cur = worklist.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      if (isView(user))
        worklist.push_back(user->getResult(0));
      else
        fn(user);
    }
  }
}

void mlir::hexir::forEachUse(Value v, llvm::function_ref<void(OpOperand &)> fn) {
  SmallVector<Value> worklist = {v};
  while (!worklist.empty()) {
    Value cur = worklist.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      if (isView(use.getOwner()))
        worklist.push_back(use.getOwner()->getResult(0));
      else
        fn(use);
    }
  }
}

std::string mlir::hexir::bufferName(CallTirOp d, Value result) {
  std::string name = dispatchName(d);
  if (d.getNumResults() > 1)
    name += "#" + std::to_string(cast<OpResult>(result).getResultNumber());
  return name;
}

std::string mlir::hexir::withThousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

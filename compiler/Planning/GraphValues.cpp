//===- GraphValues.cpp - the values of a call_tir graph as memory ---------===//
#include "Planning/GraphValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <set>
#include <vector>

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

static void collectNames(Location loc, llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().str());
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectNames(inner, names);
  } else if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    collectNames(call.getCallee(), names);
  }
}

SmallVector<std::string> mlir::hexir::sourceNames(CallTirOp d) {
  if (auto recorded = d->getAttrOfType<ArrayAttr>(kSourcesAttrName))
    return llvm::map_to_vector(recorded.getAsValueRange<StringAttr>(), [](StringRef s) { return s.str(); });
  llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>> names;
  if (auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(d, d.getCalleeAttr()))
    kernel.walk([&](Operation *op) {
      if (!isa<func::FuncOp, func::ReturnOp>(op))
        collectNames(op->getLoc(), names);
    });
  return SmallVector<std::string>(names.begin(), names.end());
}

std::string mlir::hexir::dispatchName(CallTirOp d) {
  if (auto name = d->getAttrOfType<StringAttr>(kDispatchNameAttrName))
    return name.str();
  return d.getCallee().str();
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

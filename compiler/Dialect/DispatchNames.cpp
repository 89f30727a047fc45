//===- DispatchNames.cpp - what a dispatch reports as its name and sources -===//
#include "Dialect/DispatchNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <set>
#include <vector>

using namespace mlir;

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


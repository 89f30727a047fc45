//===- DispatchReport.cpp - which source ops each dispatch covers ---------===//
#include "Driver/DispatchReport.h"

#include "Dialect/HexirDialect.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

// Source names in a location: NameLoc names, through fused and call-site locations.
void collectNames(Location loc, llvm::SetVector<StringRef> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().strref());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectNames(inner, names);
    return;
  }
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    collectNames(call.getCallee(), names);
}

} // namespace

void mlir::hexir::printDispatches(func::FuncOp entry, llvm::raw_ostream &os) {
  unsigned count = 0;
  os << "dispatches of @" << entry.getSymName() << ":\n";
  entry.walk([&](CallTirOp call) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
    llvm::SetVector<StringRef> names;
    if (kernel)
      kernel.walk([&](Operation *op) {
        if (!isa<func::FuncOp, func::ReturnOp>(op))
          collectNames(op->getLoc(), names);
      });
    os << "  " << count++ << " " << call.getCallee() << " -> ";
    llvm::interleaveComma(call.getResultTypes(), os);
    os << " covers ";
    if (names.empty())
      os << "(no named source op)";
    else
      llvm::interleave(names, os, [&](StringRef n) { os << "'" << n << "'"; }, ", ");
    os << "\n";
  });
  os << count << " dispatches\n";
}

//===- DispatchReport.cpp - which source ops each dispatch covers ---------===//
#include "Driver/DispatchReport.h"

#include "Dialect/DispatchNames.h"

using namespace mlir;


void mlir::hexir::printDispatches(func::FuncOp entry, llvm::raw_ostream &os) {
  unsigned count = 0;
  os << "dispatches of @" << entry.getSymName() << ":\n";
  entry.walk([&](CallTirOp call) {
    SmallVector<std::string> names = sourceNames(call);
    std::string name = dispatchName(call);
    os << "  " << count++ << " " << name;
    if (name != call.getCallee())
      os << " (kernel " << call.getCallee() << ")";
    os << " -> ";
    llvm::interleaveComma(call.getResultTypes(), os);
    os << " covers ";
    if (names.empty())
      os << "(no named source op)";
    else
      llvm::interleave(names, os, [&](const std::string &n) { os << "'" << n << "'"; }, ", ");
    os << "\n";
  });
  os << count << " dispatches\n";
}

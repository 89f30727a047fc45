//===- DispatchReport.h - which source ops each dispatch covers --*- C++ -*-===//
//
// `hexir-compile --print-dispatches`: after dispatch formation, one line per hexir.call_tir of
// the entry function, in order: the kernel, its result types, and the names of the source ops
// (ONNX node names, MLIR name locations) whose computation it holds, fused ones included.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_DISPATCHREPORT_H
#define HEXIR_COMPILER_DRIVER_DISPATCHREPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::hexir {

void printDispatches(func::FuncOp entry, llvm::raw_ostream &os);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_DISPATCHREPORT_H

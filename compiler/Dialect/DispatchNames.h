//===- DispatchNames.h - a dispatch's name and source ops ------*- C++ -*-===//
//
// What a hexir.call_tir reports about itself (plans, messages, --print-dispatches, the
// profiler): its own name and the source ops (ONNX node names) its kernel computes. Both come
// from its kernel, unless hexir-deduplicate-kernels gave it another kernel: then from what it
// recorded (kDispatchNameAttrName, kSourcesAttrName).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DIALECT_DISPATCHNAMES_H
#define HEXIR_COMPILER_DIALECT_DISPATCHNAMES_H

#include "Dialect/HexirDialect.h"

#include <string>

namespace mlir::hexir {

// The dispatch's own name: its kernel's, or the one it had before its kernel was found
// identical to another.
std::string dispatchName(CallTirOp d);

// The names of the source ops (ONNX node names, MLIR name locations) whose computation the
// dispatch's kernel holds, in order.
SmallVector<std::string> sourceNames(CallTirOp d);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DIALECT_DISPATCHNAMES_H

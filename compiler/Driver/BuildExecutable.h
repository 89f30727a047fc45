//===- BuildExecutable.h - call_tir graph to an executable spec -*- C++ -*-===//
//
// The last compiler step before the writer: a graph function in call_tir form becomes a
// serializer::Function (signature, commands, slots) and its constants are appended to the
// constant pool. Memory is planned here: every call_tir result that is not a graph output is
// an arena buffer live from its dispatch to its last reader (through reshape views); the
// planner library (MLIR-free) packs them, and a graph output is written by its producing
// dispatch straight into the caller's output buffer.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H
#define HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include "serializer/executable_spec.h"

namespace mlir::hexir {

struct BuildExecutableOptions {
  // Check the memory plan with the planner's independent verifier.
  bool verifyPlan = true;
};

// `entryIndex` maps kernel names to their entry index in kernel library 0.
FailureOr<::hexir::serializer::Function>
buildFunction(func::FuncOp graph, const llvm::StringMap<unsigned> &entryIndex,
              std::vector<uint8_t> &constantPool, const BuildExecutableOptions &options);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_BUILDEXECUTABLE_H

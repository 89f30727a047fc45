//===- Functions.h - the graph and kernel functions of a module -*- C++ -*-===//
//
// A module Hexir compiles holds two kinds of func.func: graphs (what the graph passes
// transform and dispatch formation outlines into kernels) and kernels (marked
// kKernelAttrName: what a target's kernel pipeline compiles). Declarations are neither. Both
// lists are collected up front, so a pass may add or erase functions while it walks them.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DIALECT_FUNCTIONS_H
#define HEXIR_COMPILER_DIALECT_FUNCTIONS_H

#include "Dialect/HexirDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::hexir {

inline bool isKernel(func::FuncOp fn) { return !fn.isDeclaration() && fn->hasAttr(kKernelAttrName); }
inline bool isGraph(func::FuncOp fn) { return !fn.isDeclaration() && !fn->hasAttr(kKernelAttrName); }

inline SmallVector<func::FuncOp> graphFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (isGraph(fn))
      fns.push_back(fn);
  return fns;
}

// Body of a hexir.loop or a hexir.if branch: a graph, but no function of the executable.
inline bool isBody(func::FuncOp fn) { return fn->hasAttr(kBodyAttrName); }

inline SmallVector<func::FuncOp> kernelFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (isKernel(fn))
      fns.push_back(fn);
  return fns;
}

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DIALECT_FUNCTIONS_H

//===- GraphValues.h - the values of a call_tir graph as memory -*- C++ -*-===//
//
// What the memory planning steps agree on about a graph in call_tir form: a reshape
// (expand/collapse_shape) is a view sharing its source's memory; every other value is the
// result of a dispatch, a constant or an argument.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_GRAPHVALUES_H
#define HEXIR_COMPILER_PLANNING_GRAPHVALUES_H

#include "Dialect/DispatchNames.h"
#include "Dialect/HexirDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::hexir {

// Every buffer is planned at this alignment (a cache line, an AVX-512 vector).
inline constexpr uint64_t kBufferAlignment = 64;

inline bool isView(Operation *op) { return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op); }

// Bytes of a ranked tensor type.
uint64_t byteSize(Type type);

// 4071680 -> "4,071,680": byte counts in messages.
std::string withThousands(uint64_t n);

// The value whose memory `v` reinterprets (reshapes are views of their source).
Value rootOf(Value v);

// Calls `fn` for every op reading `v` directly or through views.
void forEachReader(Value v, llvm::function_ref<void(Operation *)> fn);

// Calls `fn` for every use of `v` directly or through views (the views' own uses).
void forEachUse(Value v, llvm::function_ref<void(OpOperand &)> fn);

// "main_dispatch_3_generic", with "#k" for result k of a dispatch with several.
std::string bufferName(CallTirOp d, Value result);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_GRAPHVALUES_H

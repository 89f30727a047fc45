//===- Elementwise.h - converting ONNX elementwise ops ----------*- C++ -*-===//
//
// The conversion every elementwise ONNX op shares (ElementwiseOps.cpp, MathOps.cpp): inputs
// broadcast as NumPy does, folded at import when all are constants (the fold functions, on
// doubles or on int64s), else one linalg.generic of the scalar body.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_ELEMENTWISE_H
#define HEXIR_COMPILER_IMPORT_ONNX_ELEMENTWISE_H

#include "Import/Onnx/Emit.h"

#include <functional>
#include <vector>

namespace hexir::onnx_import {

using FoldF = std::function<double(const std::vector<double> &)>;
using FoldI = std::function<int64_t(const std::vector<int64_t> &)>;

// Converts the node's first `numInputs` inputs with `body`, folding when all are constants
// (`fop` for float results, `iop` for integer ones; null: that type is not folded).
// `resultTypeOverride` < 0: the result has the inputs' type.
mlir::LogicalResult convertElementwise(NodeContext &ctx, size_t numInputs, int resultTypeOverride, const FoldF &fop,
                                       const FoldI &iop, const ScalarBody &body);
// A one-input op of float tensors.
mlir::LogicalResult convertUnary(NodeContext &ctx, const FoldF &fop, const ScalarBody &body);
// A one-input op of float tensors that is one math dialect op, folded with `f`.
template <typename MathOp> mlir::LogicalResult convertMathUnary(NodeContext &ctx, double (*f)(double)) {
  return convertUnary(ctx, [f](auto &a) { return f(a[0]); },
                      [](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> mlir::Value {
                        return MathOp::create(b, l, a[0]);
                      });
}
// An error naming the first input that is not a float tensor.
mlir::LogicalResult requireFloat(NodeContext &ctx);
// Bools are i8 0/1 tensors: an i1 as such a byte, and such a byte as an i1.
mlir::Value toBool(mlir::OpBuilder &b, mlir::Location loc, mlir::Value i1);
mlir::Value fromBool(mlir::OpBuilder &b, mlir::Location loc, mlir::Value i8);

} // namespace hexir::onnx_import

#endif

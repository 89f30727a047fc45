//===- Emit.h - building linalg/tensor IR for ONNX ops ----------*- C++ -*-===//
//
// The graph the importer builds is linalg and tensor on static shapes: elementwise ops and
// broadcasts are linalg.generic, reshapes are tensor.collapse_shape/expand_shape (views, never
// copies), reductions are linalg.generic with reduction loops.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_EMIT_H
#define HEXIR_COMPILER_IMPORT_ONNX_EMIT_H

#include "Import/Onnx/NodeContext.h"

#include "mlir/IR/BuiltinTypes.h"

#include <functional>

namespace hexir::onnx_import {

mlir::Type elementType(mlir::MLIRContext *ctx, DType type);
mlir::RankedTensorType tensorType(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> shape, DType type);

// A run-time SSA value for `v` (constants become arith.constant).
mlir::Value materialize(NodeContext &ctx, const OnnxValue &v);
mlir::Value constantTensor(mlir::OpBuilder &b, mlir::Location loc, const HostTensor &t);
// A scalar arith.constant of `type`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, DType type, double value);
// A tensor of `shape` holding element `k` of `t` everywhere, as a splat arith.constant: no memory
// at import for any size, and a fill of the constant pool at load (a result too large to fold).
mlir::Value splatConstant(mlir::OpBuilder &b, mlir::Location loc, DType type, llvm::ArrayRef<int64_t> shape,
                          const HostTensor &t, int64_t k);
// Element `k` of `t` as a constant of `type`: integers exactly (a double rounds above 2^53).
mlir::Value elementConstant(mlir::OpBuilder &b, mlir::Location loc, DType type, const HostTensor &t, int64_t k);

// `v` with `shape` (same element count): a folded constant, or a view of a run-time value.
OnnxValue reshaped(NodeContext &ctx, const OnnxValue &v, std::vector<int64_t> shape);

// The NumPy broadcast of the inputs' shapes, or an error naming the two that do not broadcast.
mlir::FailureOr<std::vector<int64_t>> broadcastShapeOf(NodeContext &ctx,
                                                       llvm::ArrayRef<const OnnxValue *> inputs);

// `v` viewed with `shape` (same element count): collapse and/or expand.
mlir::Value reshapeView(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> shape);

// Scalar body: block arguments in input order -> result.
using ScalarBody = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

// An elementwise op over NumPy-broadcast inputs, result element type `resultType`.
// Splat constants are passed as scalars, not tensors.
mlir::FailureOr<OnnxValue> elementwise(NodeContext &ctx, llvm::ArrayRef<const OnnxValue *> inputs,
                                       DType resultType, const ScalarBody &body);

// Drops the dims of `v` not in `keep` (all of size 1) with a collapse view.
mlir::Value collapseUnitDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                             const std::vector<bool> &keep);

// `v` broadcast to `shape` (a copy).
mlir::Value broadcastTo(NodeContext &ctx, const OnnxValue &v, llvm::ArrayRef<int64_t> shape);

enum class ReduceKind { kSum, kSumSquares, kProd, kMax, kMin };
// Reduces `v` over `axes` (sorted, unique); the result keeps the reduced dims as size 1.
mlir::Value reduce(NodeContext &ctx, mlir::Value v, llvm::ArrayRef<int64_t> axes, ReduceKind kind);

// The index a run-time gather reads (an index value): `raw` (an integer) counted from the end
// when negative, then clamped to [0, dim) so a bad index can never read outside the tensor.
mlir::Value gatherIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value raw, int64_t dim);

// `x` (f32) rounded half to even, as ONNX and NumPy round, from floor: every CPU level has it
// (math.roundeven becomes a roundevenf call on a baseline x86-64, which kernels may not make).
// NaN and infinities pass through.
mlir::Value roundHalfToEven(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

// A tensor of `shape` and element type `type` whose element at (i0, i1, ...) is
// `body(b, l, indices)`, the indices as index values: one linalg.generic without inputs (a
// body reads other tensors with tensor.extract at coordinates it computes, always in range).
using IndexedBody = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange indices)>;
mlir::Value generate(NodeContext &ctx, llvm::ArrayRef<int64_t> shape, DType type, const IndexedBody &body);

// Softmax of float `x` along `axis`, or LogSoftmax with `log` (shifted by the max).
mlir::FailureOr<OnnxValue> softmax(NodeContext &ctx, const OnnxValue &x, int64_t axis, bool log);

mlir::Value transposeValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                           llvm::ArrayRef<int64_t> perm);

// Scalar arithmetic helpers for bodies, by element type.
mlir::Value addScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mulScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value floatConst(mlir::OpBuilder &b, mlir::Location loc, double v);
// An integer widened to `to` (zero- or sign-extended); `v` itself when it is of that type.
mlir::Value widenInt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type to, bool isUnsigned);
// The body of a contraction: yields acc + alpha * a * b for block arguments (a, b, acc); integers
// are widened to the accumulator's type (a zero-extended with `unsignedA`, b sign-extended) and
// wrap as ONNX allows.
void yieldMultiplyAccumulate(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange args, double alpha = 1.0,
                             bool unsignedA = false);

std::vector<int64_t> shapeOf(mlir::Value v);

// Normalizes a possibly negative axis; false if out of range.
bool normalizeAxis(int64_t &axis, int64_t rank);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_EMIT_H

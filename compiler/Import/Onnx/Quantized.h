//===- Quantized.h - pieces the quantized ops share -------------*- C++ -*-===//
//
// Integer matrix products (LinearOps.cpp), integer convolutions (ConvolutionOps.cpp) and linear
// quantization (QuantizeOps.cpp), shared by the float ops and QuantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_QUANTIZED_H
#define HEXIR_COMPILER_IMPORT_ONNX_QUANTIZED_H

#include "Import/Onnx/NodeContext.h"

namespace hexir::onnx_import {

// numpy.matmul of `a` and `b`, both of type `acc` (float, or int32: exact, wrapping at 32 bits).
mlir::FailureOr<OnnxValue> matmulValues(NodeContext &ctx, const OnnxValue &a, const OnnxValue &b, DType acc);

// ONNX Conv of `x` by `w` (NCHW, 1-D or 2-D, the node's window and group attributes), both of
// type `acc` (float, or int32: exact, wrapping at 32 bits), starting from `bias` (one per filter)
// or zero.
mlir::FailureOr<OnnxValue> convolveValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &w,
                                          const OnnxValue *bias, DType acc);

// saturate(round_half_even(x / scale) + zero_point) into `out` (int8 or uint8); x float, scale
// float and zero point of type `out`, each broadcasting against x. Folded when all are known.
mlir::FailureOr<OnnxValue> quantizeValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &scale,
                                          const OnnxValue &zeroPoint, DType out);

// int32(x) - int32(zero_point) (x int8 or uint8, the zero point of its type, broadcasting against
// it); folded when both are known.
mlir::FailureOr<OnnxValue> shiftedToInt32(NodeContext &ctx, const OnnxValue &x, const OnnxValue &zeroPoint);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_QUANTIZED_H

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

// numpy.matmul of `a` and `b`, both of type `acc` (float, or int32: exact, wrapping at 32 bits;
// int8 operands are sign-extended to it, or `a`'s bytes zero-extended with `unsignedA`).
mlir::FailureOr<OnnxValue> matmulValues(NodeContext &ctx, const OnnxValue &a, const OnnxValue &b, DType acc,
                                        bool unsignedA = false);

// ONNX Conv of `x` by `w` (NCHW, 1-D or 2-D, the node's window and group attributes), both of
// type `acc` (float, or int32: exact, wrapping at 32 bits; int8 operands are sign-extended to
// it), starting from `bias` (one per filter, of type `acc`) or zero; x is padded with `padValue`.
mlir::FailureOr<OnnxValue> convolveValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &w,
                                          const OnnxValue *bias, DType acc, double padValue = 0.0);

// saturate(round_half_even(x / scale) + zero_point) into `out` (int8 or uint8); x float, scale
// float and zero point of type `out`, each broadcasting against x. Folded when all are known.
mlir::FailureOr<OnnxValue> quantizeValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &scale,
                                          const OnnxValue &zeroPoint, DType out);

// (x - zero_point) * scale in float32 (x int8, uint8 or int32; scale and zero point
// broadcasting against it), one elementwise op.
mlir::FailureOr<OnnxValue> dequantizeValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &scale,
                                            const OnnxValue &zeroPoint);

// int32(x) - int32(zero_point) (x int8 or uint8, the zero point of its type, broadcasting against
// it); folded when both are known.
mlir::FailureOr<OnnxValue> shiftedToInt32(NodeContext &ctx, const OnnxValue &x, const OnnxValue &zeroPoint);

// The same dequantized values as the other 8-bit type `to`: xq with its sign bit flipped (an
// elementwise op that fuses into its producer; an order-preserving map between uint8 and int8)
// and the zero point moved by 128 (int8 xq - 128 for uint8 xq, uint8 xq + 128 for int8 xq).
// `x` itself when it is of type `to` already; `x` per tensor.
mlir::FailureOr<DequantizedSource> as8Bit(NodeContext &ctx, const DequantizedSource &x, DType to);

// The int8 or uint8 (U8S8, ONNX Runtime's QUInt8) activation behind `v` (DequantizeLinear's
// result): run-time, per tensor, with a known scale and zero point; null otherwise.
const DequantizedSource *int8Activation(const OnnxValue &v);

// sum_k (a - a_zero_point)(b - b_zero_point) in int32 (numpy.matmul of a [..., M, K] and
// b [..., K, N], both of rank 2 or more, int8 or uint8; the zero points of their types, each one
// value or a's one per row [M, 1] and b's one per column [N], constant or computed at run
// time) as the product of A read as unsigned bytes by B read as signed ones (a VNNI dot
// product's operands: each flipped where it is of the other type), the row sums of A and the
// column sums of B at run time, and the zero points' terms in an epilogue.
mlir::FailureOr<OnnxValue> zeroPointProduct(NodeContext &ctx, const OnnxValue &a, const OnnxValue &aZero,
                                            const OnnxValue &b, const OnnxValue &bZero);

// Conv, MatMul and Gemm of int8 values behind DequantizeLinear (a QDQ model's activations per
// tensor, its constant weights symmetric per tensor or per output channel; for MatMul also two
// activations of rank 2 or more) computed on the integers: an int32 accumulation, dequantized
// in float32 by the epilogue (the bias added there), where the ONNX graph computes in float32
// on dequantized copies. None when the inputs are not of that form: the float lowering then
// runs (QuantizedContractions.cpp).
mlir::FailureOr<std::optional<OnnxValue>> quantizedConv(NodeContext &ctx);
mlir::FailureOr<std::optional<OnnxValue>> quantizedMatMul(NodeContext &ctx);
mlir::FailureOr<std::optional<OnnxValue>> quantizedGemm(NodeContext &ctx);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_QUANTIZED_H

//===- Window.h - the geometry shared by convolutions and pools -*- C++ -*-===//
//
// Conv, ConvTranspose, MaxPool and AveragePool in 1-D to 3-D resolve each spatial axis the same
// way (ONNX's auto_pad, PyTorch's ceil_mode rule) and start a convolution's accumulator from
// its bias the same way.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_WINDOW_H
#define HEXIR_COMPILER_IMPORT_ONNX_WINDOW_H

#include "Import/Onnx/NodeContext.h"

#include <string>

namespace hexir::onnx_import {

// One spatial axis of a window op: the input size, the window's kernel, stride, dilation and
// pads as the attributes give them, and the output size resolveWindowAxis computes.
struct WindowAxis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0, out = 1;
};

// Checks the axis' values (kernel, stride and dilation positive, pads non-negative, all at most
// 2^31: no size computed from them overflows), applies `autoPad` (NOTSET, SAME_UPPER,
// SAME_LOWER, VALID) to the pads and computes the output size (with `ceilMode`, the last window
// must start inside the input or its left padding, as PyTorch and ONNX Runtime have it).
mlir::LogicalResult resolveWindowAxis(NodeContext &ctx, const std::string &autoPad, bool ceilMode, WindowAxis &a);

// A window attribute (strides, dilations, pads, output_padding), or `count` copies of `fill`
// when the node has none.
std::vector<int64_t> windowAttr(NodeContext &ctx, const char *name, int64_t fill, size_t count);

// A convolution's kernel_shape: the weight's spatial dims (`weight` [F, C, k...]), which the
// attribute must equal when given.
mlir::FailureOr<std::vector<int64_t>> convolutionKernel(NodeContext &ctx, const OnnxValue &weight);

// A convolution's accumulator before its products: `bias` (one value per output channel, axis
// 1) broadcast to `outShape`, or zeros of type `acc`.
mlir::Value convolutionInit(NodeContext &ctx, const OnnxValue *bias, llvm::ArrayRef<int64_t> outShape, DType acc);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_WINDOW_H

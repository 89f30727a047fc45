//===- Window.cpp - the geometry shared by convolutions and pools ---------===//
#include "Import/Onnx/Window.h"

#include "Import/Onnx/Emit.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace hexir::onnx_import {

LogicalResult resolveWindowAxis(NodeContext &ctx, const std::string &autoPad, bool ceilMode, WindowAxis &a) {
  if (a.kernel <= 0 || a.stride <= 0 || a.dilation <= 0 || a.padBegin < 0 || a.padEnd < 0)
    return ctx.error() << "kernel, strides and dilations must be positive and pads non-negative";
  // Far above any real window, and low enough that no size computed below can overflow.
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  for (int64_t v : {a.kernel, a.stride, a.dilation, a.padBegin, a.padEnd})
    if (v > kMaxWindow)
      return ctx.error() << "kernel, strides, dilations and pads must be at most 2^31, got " << v;
  int64_t extent = (a.kernel - 1) * a.dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t out = (a.in + a.stride - 1) / a.stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * a.stride + extent - a.in);
    a.padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    a.padEnd = total - a.padBegin;
  } else if (autoPad == "VALID") {
    a.padBegin = a.padEnd = 0;
  } else if (autoPad != "NOTSET") {
    return ctx.error() << "unsupported attribute auto_pad='" << autoPad << "'";
  }
  int64_t span = a.in + a.padBegin + a.padEnd - extent;
  if (span < 0)
    return ctx.error() << "the window (" << extent << ") is larger than the padded input ("
                       << a.in + a.padBegin + a.padEnd << ")";
  a.out = (ceilMode ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
  if (ceilMode && (a.out - 1) * a.stride >= a.in + a.padBegin)
    --a.out;
  return success();
}

std::vector<int64_t> windowAttr(NodeContext &ctx, const char *name, int64_t fill, size_t count) {
  std::vector<int64_t> v = ctx.attrInts(name);
  return v.empty() ? std::vector<int64_t>(count, fill) : v;
}

FailureOr<std::vector<int64_t>> convolutionKernel(NodeContext &ctx, const OnnxValue &weight) {
  std::vector<int64_t> kernel = ctx.attrInts("kernel_shape"), weightKernel(weight.shape.begin() + 2, weight.shape.end());
  if (!kernel.empty() && kernel != weightKernel)
    return ctx.error() << "kernel_shape " << shapeString(kernel) << " differs from the weight's spatial shape "
                       << shapeString(weightKernel);
  return weightKernel;
}

Value convolutionInit(NodeContext &ctx, const OnnxValue *bias, ArrayRef<int64_t> outShape, DType acc) {
  if (bias) {
    std::vector<int64_t> perChannel(outShape.size() - 1, 1);
    perChannel[0] = outShape[1];
    return broadcastTo(ctx, reshaped(ctx, *bias, perChannel), outShape);
  }
  OpBuilder &b = ctx.b;
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, elementType(b.getContext(), acc));
  return linalg::FillOp::create(b, ctx.loc, ValueRange{scalarConstant(b, ctx.loc, acc, 0.0)}, ValueRange{empty})
      .getResult(0);
}

} // namespace hexir::onnx_import

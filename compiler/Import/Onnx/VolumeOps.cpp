//===- VolumeOps.cpp - ONNX Conv, MaxPool and AveragePool in 3-D ----------===//
//
// Video and volumetric models (NCDHW). Each op is one linalg.generic with linear indexing maps
// over an explicitly padded input: a convolution's loops are n, g, f, od, oh, ow | c, kd, kh, kw
// (the group a loop of its own, as 2-D grouped convolutions have it), a pooling's n, c, od, oh,
// ow | kd, kh, kw over a window operand. AveragePool divides by a constant per-position count.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/VolumeOps.h"

#include "Import/Onnx/Emit.h"
#include "Import/Onnx/Window.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

struct Window3 {
  int64_t kernel[3], stride[3], dilation[3], padBegin[3], padEnd[3], in[3], out[3];
};

LogicalResult readWindow3(NodeContext &ctx, const OnnxValue &x, const std::vector<int64_t> &kernel, bool ceilMode,
                          Window3 &w) {
  std::vector<int64_t> strides = windowAttr(ctx, "strides", 1, 3), dilations = windowAttr(ctx, "dilations", 1, 3),
                       pads = windowAttr(ctx, "pads", 0, 6);
  if (kernel.size() != 3 || strides.size() != 3 || dilations.size() != 3 || pads.size() != 6)
    return ctx.error() << "kernel_shape, strides, dilations or pads do not match 3 spatial dimensions";
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  for (int d = 0; d < 3; ++d) {
    w.kernel[d] = kernel[d];
    w.stride[d] = strides[d];
    w.dilation[d] = dilations[d];
    w.in[d] = x.shape[2 + d];
    WindowAxis axis{w.in[d], w.kernel[d], w.stride[d], w.dilation[d], pads[d], pads[d + 3]};
    if (failed(resolveWindowAxis(ctx, autoPad, ceilMode, axis)))
      return failure();
    w.padBegin[d] = axis.padBegin;
    w.padEnd[d] = axis.padEnd;
    w.out[d] = axis.out;
  }
  return success();
}

// `x` (NCDHW) padded with `value` to what the windows read.
Value padVolume(NodeContext &ctx, Value x, const Window3 &w, double value) {
  OpBuilder &b = ctx.b;
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> low = {0, 0}, high = {0, 0}, shape = {t.getDimSize(0), t.getDimSize(1)};
  bool any = false;
  for (int d = 0; d < 3; ++d) {
    int64_t need = (w.out[d] - 1) * w.stride[d] + (w.kernel[d] - 1) * w.dilation[d] + 1;
    int64_t hi = std::max<int64_t>(0, need - w.in[d] - w.padBegin[d]);
    low.push_back(w.padBegin[d]);
    high.push_back(hi);
    shape.push_back(w.in[d] + w.padBegin[d] + hi);
    any |= w.padBegin[d] != 0 || hi != 0;
  }
  if (!any)
    return x;
  MLIRContext *mc = b.getContext();
  return tensor::PadOp::create(b, ctx.loc, RankedTensorType::get(shape, t.getElementType()), x,
                               getAsIndexOpFoldResult(mc, low), getAsIndexOpFoldResult(mc, high),
                               floatConst(b, ctx.loc, value));
}

// The input coordinate expression of output dim `o` and window dim `k` along spatial dim d.
AffineExpr tapExpr(MLIRContext *mc, unsigned o, unsigned k, const Window3 &w, int d) {
  return getAffineDimExpr(o, mc) * w.stride[d] + getAffineDimExpr(k, mc) * w.dilation[d];
}

} // namespace

LogicalResult convertConv3D(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0), &wv = ctx.input(1);
  if (!isFloat(x.type) || failed(ctx.requireFloatInputs({1, 2})))
    return ctx.error() << "input, weight and bias must be float tensors";
  if (wv.rank() != 5)
    return ctx.error() << "weight rank " << wv.rank() << " differs from input rank 5";
  auto kernelOr = convolutionKernel(ctx, wv);
  if (failed(kernelOr))
    return failure();
  std::vector<int64_t> kernel = *kernelOr;
  Window3 w;
  if (failed(readWindow3(ctx, x, kernel, false, w)))
    return failure();
  int64_t group = ctx.attrInt("group", 1), n = x.shape[0], c = x.shape[1], f = wv.shape[0];
  if (group <= 0 || c % group != 0 || f % group != 0 || wv.shape[1] != c / group)
    return ctx.error() << "weight " << shapeString(wv.shape) << " does not match input " << shapeString(x.shape)
                       << " with group " << group;
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  int64_t cg = c / group, fg = f / group;
  std::vector<int64_t> outShape = {n, f, w.out[0], w.out[1], w.out[2]};
  const OnnxValue *bias = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  if (bias && bias->numElements() != f)
    return ctx.error() << "bias has " << bias->numElements() << " values for " << f << " filters";
  Value init = convolutionInit(ctx, bias, outShape, DType::kFloat);
  Value input = padVolume(ctx, materialize(ctx, x), w, 0.0);
  auto pt = cast<RankedTensorType>(input.getType());
  Value image = reshapeView(b, ctx.loc, input, {n, group, cg, pt.getDimSize(2), pt.getDimSize(3), pt.getDimSize(4)});
  Value filter = materialize(ctx, reshaped(ctx, wv, {group, fg, cg, kernel[0], kernel[1], kernel[2]}));
  std::vector<int64_t> groupedShape = {n, group, fg, w.out[0], w.out[1], w.out[2]};
  Value groupedInit = reshapeView(b, ctx.loc, init, groupedShape);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
  // Loops: n, g, fo, od, oh, ow | ci, kd, kh, kw.
  SmallVector<AffineMap> maps = {
      AffineMap::get(10, 0, {d(0), d(1), d(6), tapExpr(mc, 3, 7, w, 0), tapExpr(mc, 4, 8, w, 1), tapExpr(mc, 5, 9, w, 2)}, mc),
      AffineMap::get(10, 0, {d(1), d(2), d(6), d(7), d(8), d(9)}, mc),
      AffineMap::get(10, 0, {d(0), d(1), d(2), d(3), d(4), d(5)}, mc)};
  SmallVector<utils::IteratorType> iterators(6, utils::IteratorType::parallel);
  iterators.append(4, utils::IteratorType::reduction);
  Value out = linalg::GenericOp::create(b, ctx.loc, TypeRange{groupedInit.getType()}, ValueRange{image, filter},
                                        ValueRange{groupedInit}, maps, iterators,
                                        [](OpBuilder &nb, Location nl, ValueRange a) { yieldMultiplyAccumulate(nb, nl, a); })
                  .getResult(0);
  ctx.setOutput(0, OnnxValue::ofValue(reshapeView(b, ctx.loc, out, outShape), DType::kFloat));
  return success();
}

LogicalResult convertPool3D(NodeContext &ctx, bool isMax) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  if (isMax && ctx.hasOutput(1))
    return ctx.error() << "the Indices output is not supported";
  Window3 w;
  if (failed(readWindow3(ctx, x, ctx.attrInts("kernel_shape"), ctx.attrInt("ceil_mode", 0) != 0, w)))
    return failure();
  if (!isMax && ctx.attr("dilations") && llvm::any_of(ctx.attrInts("dilations"), [](int64_t v) { return v != 1; }))
    return ctx.error() << "AveragePool's dilations are not supported";
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value input = padVolume(ctx, materialize(ctx, x), w, padValue);
  std::vector<int64_t> outShape = {x.shape[0], x.shape[1], w.out[0], w.out[1], w.out[2]};
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, b.getF32Type());
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{floatConst(b, ctx.loc, padValue)}, ValueRange{empty})
                   .getResult(0);
  Value window = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{w.kernel[0], w.kernel[1], w.kernel[2]},
                                         b.getF32Type());
  auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
  // Loops: n, c, od, oh, ow | kd, kh, kw.
  SmallVector<AffineMap> maps = {
      AffineMap::get(8, 0, {d(0), d(1), tapExpr(mc, 2, 5, w, 0), tapExpr(mc, 3, 6, w, 1), tapExpr(mc, 4, 7, w, 2)}, mc),
      AffineMap::get(8, 0, {d(5), d(6), d(7)}, mc), AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, mc)};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value pooled = linalg::GenericOp::create(b, ctx.loc, TypeRange{init.getType()}, ValueRange{input, window},
                                           ValueRange{init}, maps, iterators,
                                           [isMax](OpBuilder &nb, Location nl, ValueRange a) {
                                             Value r = isMax ? arith::MaximumFOp::create(nb, nl, a[2], a[0]).getResult()
                                                             : arith::AddFOp::create(nb, nl, a[2], a[0]).getResult();
                                             linalg::YieldOp::create(nb, nl, r);
                                           })
                     .getResult(0);
  if (isMax) {
    ctx.setOutput(0, OnnxValue::ofValue(pooled, DType::kFloat));
    return success();
  }
  // Each position's count: the taps inside the input (or inside the padded input with
  // count_include_pad), a product over the three dims.
  bool includePad = ctx.attrInt("count_include_pad", 0) != 0;
  std::vector<std::vector<int64_t>> counts(3);
  for (int dd = 0; dd < 3; ++dd)
    for (int64_t o = 0; o < w.out[dd]; ++o) {
      int64_t cnt = 0;
      for (int64_t k = 0; k < w.kernel[dd]; ++k) {
        int64_t p = o * w.stride[dd] - w.padBegin[dd] + k;
        cnt += includePad ? (p >= -w.padBegin[dd] && p < w.in[dd] + w.padEnd[dd]) : (p >= 0 && p < w.in[dd]);
      }
      counts[dd].push_back(cnt);
    }
  HostTensor inv = HostTensor::zeros(DType::kFloat, {w.out[0], w.out[1], w.out[2]});
  for (int64_t i = 0; i < w.out[0]; ++i)
    for (int64_t j = 0; j < w.out[1]; ++j)
      for (int64_t k = 0; k < w.out[2]; ++k) {
        int64_t cnt = counts[0][i] * counts[1][j] * counts[2][k];
        inv.f[(i * w.out[1] + j) * w.out[2] + k] = cnt > 0 ? static_cast<float>(1.0 / static_cast<double>(cnt)) : 0.0f;
      }
  OnnxValue sum = OnnxValue::ofValue(pooled, DType::kFloat), scale = OnnxValue::ofConstant(std::move(inv));
  auto avg = elementwise(ctx, {&sum, &scale}, DType::kFloat, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
    return arith::MulFOp::create(nb, nl, a[0], a[1]);
  });
  if (failed(avg))
    return failure();
  ctx.setOutput(0, *avg);
  return success();
}

} // namespace hexir::onnx_import

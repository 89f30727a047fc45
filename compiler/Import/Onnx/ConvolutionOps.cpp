//===- ConvolutionOps.cpp - ONNX Conv and pooling -------------------------===//
//
// NCHW throughout, as ONNX: Conv is linalg.conv_2d_nchw_fchw (group 1), depthwise_conv_2d_nchw_chw
// (one filter per channel) or a grouped linalg.generic with the group as a loop of its own (linear
// indexing maps, see convolveValues); pooling is linalg.pooling_nchw_*. 1-D
// convolutions and pools run as 2-D ones of height 1. Padding is an explicit tensor.pad.
// convolveValues also serves ConvInteger and QLinearConv (QuantizeOps.cpp) in int32.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"
#include "Import/Onnx/VolumeOps.h"
#include "Import/Onnx/Window.h"
#include "Import/Onnx/Quantized.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Spatial geometry of a window op over the two spatial dims.
struct Window {
  int64_t kernel[2], stride[2], dilation[2], padBegin[2], padEnd[2], in[2], out[2];
  bool oneD = false;
};

// Reads kernel_shape/strides/dilations/pads/auto_pad for a 1-D or 2-D window op on `x`.
LogicalResult readWindow(NodeContext &ctx, const std::vector<int64_t> &xShape,
                         const std::vector<int64_t> &kernelShape, bool ceilMode, Window &w) {
  int64_t spatial = static_cast<int64_t>(xShape.size()) - 2;
  if (spatial != 1 && spatial != 2)
    return ctx.error() << "input has rank " << xShape.size()
                       << "; Hexir supports 1-D and 2-D windows (rank 3 or 4, NCHW)";
  if (static_cast<int64_t>(kernelShape.size()) != spatial)
    return ctx.error() << "kernel_shape has " << kernelShape.size() << " values for " << spatial
                       << " spatial dimensions";
  std::vector<int64_t> strides = ctx.attrInts("strides"), dilations = ctx.attrInts("dilations"),
                       pads = ctx.attrInts("pads");
  if (strides.empty())
    strides.assign(spatial, 1);
  if (dilations.empty())
    dilations.assign(spatial, 1);
  if (pads.empty())
    pads.assign(2 * spatial, 0);
  if (static_cast<int64_t>(strides.size()) != spatial || static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return ctx.error() << "strides, dilations or pads do not match " << spatial << " spatial dimensions";
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  w.oneD = spatial == 1;
  int64_t off = w.oneD ? 1 : 0;  // 1-D ops use the second (width) slot
  for (int64_t d = 0; d < 2; ++d) {
    w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    w.padBegin[d] = w.padEnd[d] = 0;
    w.in[d] = w.out[d] = 1;
  }
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t d = s + off;
    w.kernel[d] = kernelShape[s];
    w.stride[d] = strides[s];
    w.dilation[d] = dilations[s];
    w.in[d] = xShape[2 + s];
    WindowAxis axis{w.in[d], w.kernel[d], w.stride[d], w.dilation[d], pads[s], pads[s + spatial]};
    if (failed(resolveWindowAxis(ctx, autoPad, ceilMode, axis)))
      return failure();
    w.padBegin[d] = axis.padBegin;
    w.padEnd[d] = axis.padEnd;
    w.out[d] = axis.out;
  }
  return success();
}

DenseIntElementsAttr i64Pair(OpBuilder &b, const int64_t v[2]) {
  return DenseIntElementsAttr::get(RankedTensorType::get({2}, b.getI64Type()), ArrayRef<int64_t>{v[0], v[1]});
}

// x as NCHW (1-D inputs get height 1), padded with `padValue` up to what the window reads.
Value padInput(NodeContext &ctx, Value x, const Window &w, double padValue) {
  OpBuilder &b = ctx.b;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t lowH = w.padBegin[0], lowW = w.padBegin[1];
  int64_t needH = (w.out[0] - 1) * w.stride[0] + (w.kernel[0] - 1) * w.dilation[0] + 1;
  int64_t needW = (w.out[1] - 1) * w.stride[1] + (w.kernel[1] - 1) * w.dilation[1] + 1;
  int64_t highH = std::max<int64_t>(0, needH - w.in[0] - lowH);
  int64_t highW = std::max<int64_t>(0, needW - w.in[1] - lowW);
  if (lowH == 0 && lowW == 0 && highH == 0 && highW == 0)
    return x;
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1), w.in[0] + lowH + highH,
                                w.in[1] + lowW + highW};
  Type element = type.getElementType();
  Value pad = isa<FloatType>(element)
                  ? arith::ConstantOp::create(b, ctx.loc, b.getFloatAttr(element, padValue)).getResult()
                  : arith::ConstantOp::create(b, ctx.loc, b.getIntegerAttr(element, static_cast<int64_t>(padValue)))
                        .getResult();
  return tensor::PadOp::create(b, ctx.loc, RankedTensorType::get(shape, type.getElementType()), x,
                               getAsIndexOpFoldResult(b.getContext(), {0, 0, lowH, lowW}),
                               getAsIndexOpFoldResult(b.getContext(), {0, 0, highH, highW}), pad);
}

std::vector<int64_t> as4D(const std::vector<int64_t> &shape) {
  if (shape.size() == 3)
    return {shape[0], shape[1], 1, shape[2]};
  return shape;
}

// The int8 or uint8 activation a QDQ model's max pooling reads behind DequantizeLinear (run time, per
// tensor, a positive constant scale), pooled on its integers with the int8 kernels; null
// otherwise.
const DequantizedSource *int8PoolSource(NodeContext &ctx, const OnnxValue &x) {
  const DequantizedSource *d = ctx.int8Kernels ? int8Activation(x) : nullptr;
  if (!d || d->scale.numElements() != 1 || !(d->scale.constant->f[0] > 0.0f) ||
      std::isinf(d->scale.constant->f[0]))
    return nullptr;
  return d;
}

// An NCHW result back to 1-D (NCW) if the window op's input was.
Value windowResult(NodeContext &ctx, Value out, const Window &w) {
  if (!w.oneD)
    return out;
  auto s = shapeOf(out);
  return reshapeView(ctx.b, ctx.loc, out, {s[0], s[1], s[3]});
}

// Sets output `i` from an NCHW result of `type`, back to 1-D if the input was.
void setWindowOutput(NodeContext &ctx, Value out, const Window &w, size_t i = 0, DType type = DType::kFloat) {
  ctx.setOutput(i, OnnxValue::ofValue(windowResult(ctx, out, w), type));
}

LogicalResult requireFloatInput(NodeContext &ctx) {
  if (!isFloat(ctx.input(0).type))
    return ctx.error() << "input must be a float tensor";
  return success();
}

LogicalResult convertConv(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)) || failed(ctx.requireFloatInputs({1, 2})))
    return failure();
  if (ctx.input(0).rank() == 5)
    return convertConv3D(ctx);
  FailureOr<std::optional<OnnxValue>> quantized = quantizedConv(ctx);
  if (failed(quantized))
    return failure();
  if (*quantized) {
    ctx.setOutput(0, **quantized);
    return success();
  }
  FailureOr<OnnxValue> y = convolveValues(ctx, ctx.input(0), ctx.input(1), ctx.hasInput(2) ? &ctx.input(2) : nullptr,
                                          DType::kFloat);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

// A 2-D pooling of `x` over the window `w`: padded with `padValue`, accumulated into a tensor
// filled with `padValue` (the reduction's identity), by linalg.pooling_nchw_max or _sum.
// (An int8 `x` pools its integers: a max, padded and filled with -128.)
Value poolNchw(NodeContext &ctx, const OnnxValue &x, const Window &w, double padValue, bool isMax) {
  OpBuilder &b = ctx.b;
  Value input = padInput(ctx, reshapeView(b, ctx.loc, materialize(ctx, x), as4D(x.shape)), w, padValue);
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  std::vector<int64_t> outShape = {x.shape[0], x.shape[1], w.out[0], w.out[1]};
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, element);
  Value identity = isa<FloatType>(element)
                       ? floatConst(b, ctx.loc, padValue)
                       : arith::ConstantOp::create(b, ctx.loc, b.getIntegerAttr(element, static_cast<int64_t>(padValue)))
                             .getResult();
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{identity}, ValueRange{empty}).getResult(0);
  Value window = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{w.kernel[0], w.kernel[1]}, element);
  // Ranges over locals: TypeRange/ValueRange from a braced list would dangle.
  SmallVector<Type> types = {init.getType()};
  SmallVector<Value> ins = {input, window}, outs = {init};
  if (isMax)
    return linalg::PoolingNchwMaxOp::create(b, ctx.loc, types, ins, outs, i64Pair(b, w.stride), i64Pair(b, w.dilation))
        .getResult(0);
  return linalg::PoolingNchwSumOp::create(b, ctx.loc, types, ins, outs, i64Pair(b, w.stride), i64Pair(b, w.dilation))
      .getResult(0);
}

// MaxPool's Indices: for each output, the flat index in `x` [N, C, H, W] of the first window
// element (in row-major scan order, as ONNX Runtime picks it) equal to the max `y`; with
// storage_order 1, that element's column-major index (n, c, then w * H + h). A reduction over
// the window keeping the smallest row-major index that matches, then converted.
Value maxPoolIndices(NodeContext &ctx, Value x4, Value y, const Window &w, bool columnMajor) {
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  auto xShape = shapeOf(x4);
  int64_t channels = xShape[1], height = xShape[2], width = xShape[3];
  std::vector<int64_t> outShape = {xShape[0], channels, w.out[0], w.out[1]};
  Type i64 = b.getI64Type();
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, i64);
  Value none = arith::ConstantOp::create(b, ctx.loc, b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{none}, ValueRange{empty}).getResult(0);
  Value window = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{w.kernel[0], w.kernel[1]}, b.getI8Type());
  auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
  // Loops (n, c, oh, ow, kh, kw).
  SmallVector<AffineMap> maps = {AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, mc), AffineMap::get(6, 0, {d(4), d(5)}, mc),
                                 AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, mc)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{y, window}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        auto idx = [&](unsigned i) { return linalg::IndexOp::create(nb, nl, i).getResult(); };
        auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, nl, v).getResult(); };
        Value valid = arith::ConstantIntOp::create(nb, nl, 1, 1);
        SmallVector<Value> at = {idx(0), idx(1)};
        for (unsigned k = 0; k < 2; ++k) {
          // o * stride - padBegin + k * dilation, inside [0, size) or not read.
          Value pos = arith::AddIOp::create(
              nb, nl,
              arith::SubIOp::create(nb, nl, arith::MulIOp::create(nb, nl, idx(2 + k), cst(w.stride[k])), cst(w.padBegin[k])),
              arith::MulIOp::create(nb, nl, idx(4 + k), cst(w.dilation[k])));
          int64_t size = k == 0 ? height : width;
          Value inside = arith::AndIOp::create(
              nb, nl, arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, pos, cst(0)),
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, pos, cst(size)));
          valid = arith::AndIOp::create(nb, nl, valid, inside);
          at.push_back(arith::SelectOp::create(nb, nl, inside, pos, cst(0)));
        }
        Value v = tensor::ExtractOp::create(nb, nl, x4, at);
        Value hit = arith::AndIOp::create(nb, nl, valid, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, v, a[0]));
        // Row-major flat index ((n C + c) H + h) W + w.
        Value flat = arith::AddIOp::create(
            nb, nl,
            arith::MulIOp::create(
                nb, nl,
                arith::AddIOp::create(nb, nl,
                                      arith::MulIOp::create(nb, nl,
                                                            arith::AddIOp::create(nb, nl, arith::MulIOp::create(nb, nl, at[0], cst(channels)), at[1]),
                                                            cst(height)),
                                      at[2]),
                cst(width)),
            at[3]);
        Value flat64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), flat);
        Value best = arith::MinSIOp::create(nb, nl, a[2], flat64);
        linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, hit, best, a[2])});
      });
  Value rowMajor = generic.getResult(0);
  if (!columnMajor)
    return rowMajor;
  return generate(ctx, outShape, DType::kInt64, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
    Value r = tensor::ExtractOp::create(nb, nl, rowMajor, at);
    auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(nb, nl, v, 64).getResult(); };
    Value plane = c64(height * width);
    Value base = arith::MulIOp::create(nb, nl, arith::DivSIOp::create(nb, nl, r, plane), plane);
    Value hw = arith::RemSIOp::create(nb, nl, r, plane);
    Value h = arith::DivSIOp::create(nb, nl, hw, c64(width)), col = arith::RemSIOp::create(nb, nl, hw, c64(width));
    return arith::AddIOp::create(nb, nl, base, arith::AddIOp::create(nb, nl, arith::MulIOp::create(nb, nl, col, c64(height)), h));
  });
}

// MaxPool of an int8 or uint8 tensor (opset 12): on its int8 values, padded with -128; uint8
// with its sign bits flipped (x ^ 0x80 keeps the order), flipped back after.
LogicalResult maxPool8Bit(NodeContext &ctx, const Window &w) {
  const OnnxValue &x = ctx.input(0);
  if (ctx.hasOutput(1))
    return ctx.error() << "the Indices output of an integer MaxPool is not supported";
  bool isUnsigned = x.type == DType::kUInt8;
  auto flip = [&](const OnnxValue &v, DType to) -> FailureOr<OnnxValue> {
    return elementwise(ctx, {&v}, to, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::XOrIOp::create(nb, nl, a[0], arith::ConstantIntOp::create(nb, nl, -128, 8));
    });
  };
  OnnxValue signedX = x;
  if (isUnsigned) {
    auto flipped = flip(x, DType::kInt8);
    if (failed(flipped))
      return failure();
    signedX = *flipped;
  }
  OnnxValue y = OnnxValue::ofValue(windowResult(ctx, poolNchw(ctx, signedX, w, -128.0, /*isMax=*/true), w), DType::kInt8);
  if (isUnsigned) {
    auto back = flip(y, DType::kUInt8);
    if (failed(back))
      return failure();
    y = *back;
  }
  ctx.setOutput(0, y);
  return success();
}

LogicalResult convertMaxPool(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  bool eightBit = x.type == DType::kInt8 || x.type == DType::kUInt8;
  if (!eightBit && failed(requireFloatInput(ctx)))
    return failure();
  if (x.rank() == 5) {
    if (eightBit)
      return ctx.error() << "a 3-D MaxPool of integers is not supported";
    return convertPool3D(ctx, /*isMax=*/true);
  }
  Window w;
  if (failed(readWindow(ctx, x.shape, ctx.attrInts("kernel_shape"), ctx.attrInt("ceil_mode", 0) != 0, w)))
    return failure();
  if (eightBit)
    return maxPool8Bit(ctx, w);
  if (ctx.hasOutput(1)) {
    if (!foldable(x.shape))
      return ctx.error() << "the Indices of an input of " << shapeString(x.shape) << " do not fit the int64 range";
    Value y = poolNchw(ctx, x, w, -std::numeric_limits<float>::infinity(), /*isMax=*/true);
    Value x4 = reshapeView(ctx.b, ctx.loc, materialize(ctx, x), as4D(x.shape));
    Value indices = maxPoolIndices(ctx, x4, y, w, ctx.attrInt("storage_order", 0) != 0);
    setWindowOutput(ctx, y, w);
    setWindowOutput(ctx, indices, w, 1, DType::kInt64);
    return success();
  }
  // A QDQ model's max pooling of a dequantized int8 tensor pools the integers: dequantization
  // is increasing (a positive scale), so the max of the dequantized window is the dequantized
  // max of the window, exactly, and -128 never wins against a real element as -inf does not.
  // The int8 tensor stays int8 (a quarter of the bytes), and a QuantizeLinear after it with
  // the same scale and zero point gives it back as it is.
  // A uint8 tensor (U8S8) pools as int8 with its sign bits flipped (xq - 128 keeps the order).
  const DequantizedSource *d = w.oneD ? nullptr : int8PoolSource(ctx, x);
  if (d) {
    FailureOr<DequantizedSource> s = as8Bit(ctx, *d, DType::kInt8);
    if (failed(s))
      return failure();
    OnnxValue pooled = OnnxValue::ofValue(poolNchw(ctx, s->q, w, -128.0, /*isMax=*/true), DType::kInt8);
    FailureOr<OnnxValue> y = dequantizeValues(ctx, pooled, s->scale, s->zeroPoint);
    if (failed(y))
      return failure();
    y->dequantized = std::make_shared<DequantizedSource>(DequantizedSource{pooled, s->scale, s->zeroPoint, -1});
    ctx.setOutput(0, *y);
    return success();
  }
  setWindowOutput(ctx, poolNchw(ctx, x, w, -std::numeric_limits<float>::infinity(), /*isMax=*/true), w);
  return success();
}

LogicalResult convertAveragePool(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  if (ctx.input(0).rank() == 5)
    return convertPool3D(ctx, /*isMax=*/false);
  for (int64_t dl : ctx.attrInts("dilations"))
    if (dl != 1)
      return ctx.error() << "unsupported attribute dilations (opset 19)";
  const OnnxValue &x = ctx.input(0);
  Window w;
  if (failed(readWindow(ctx, x.shape, ctx.attrInts("kernel_shape"), ctx.attrInt("ceil_mode", 0) != 0, w)))
    return failure();
  bool countPad = ctx.attrInt("count_include_pad", 0) != 0;
  // The divisors are computed here, one per output position.
  if (!foldable({w.out[0], w.out[1]}))
    return ctx.error() << "an output of " << w.out[0] << "x" << w.out[1] << " positions is too large";
  Value sum = poolNchw(ctx, x, w, 0.0, /*isMax=*/false);
  // Each output's divisor, as PyTorch counts it: windows are clipped to the padded input
  // (count_include_pad) or to the input itself; the ceil_mode overhang never counts.
  HostTensor divisor = HostTensor::zeros(DType::kFloat, {1, 1, w.out[0], w.out[1]});
  for (int64_t oh = 0; oh < w.out[0]; ++oh)
    for (int64_t ow = 0; ow < w.out[1]; ++ow) {
      int64_t count = 1;
      for (int64_t d = 0; d < 2; ++d) {
        int64_t o = d == 0 ? oh : ow;
        int64_t start = o * w.stride[d] - w.padBegin[d];
        int64_t end = std::min(start + w.kernel[d], w.in[d] + w.padEnd[d]);
        int64_t size = end - start;
        start = std::max<int64_t>(start, 0);
        end = std::min(end, w.in[d]);
        count *= countPad ? size : end - start;
      }
      divisor.f[oh * w.out[1] + ow] = 1.0f / static_cast<float>(std::max<int64_t>(count, 1));
    }
  OnnxValue sumV = OnnxValue::ofValue(sum, DType::kFloat);
  OnnxValue divV = OnnxValue::ofConstant(std::move(divisor));
  auto out = elementwise(ctx, {&sumV, &divV}, DType::kFloat, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
    return arith::MulFOp::create(nb, nl, a[0], a[1]);
  });
  if (failed(out))
    return failure();
  setWindowOutput(ctx, out->value, w);
  return success();
}

LogicalResult convertGlobalPool(NodeContext &ctx, bool isMax) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  const OnnxValue &x = ctx.input(0);
  if (x.rank() < 3)
    return ctx.error() << "input must have rank 3 or more (N, C, spatial...)";
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t d = 2; d < x.rank(); ++d) {
    axes.push_back(d);
    count *= x.shape[d];
  }
  Value r = reduce(ctx, materialize(ctx, x), axes, isMax ? ReduceKind::kMax : ReduceKind::kSum);
  if (!isMax) {
    OnnxValue sumV = OnnxValue::ofValue(r, DType::kFloat);
    double scale = 1.0 / static_cast<double>(count);
    auto mean = elementwise(ctx, {&sumV}, DType::kFloat, [scale](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::MulFOp::create(nb, nl, a[0], floatConst(nb, nl, scale));
    });
    if (failed(mean))
      return failure();
    r = mean->value;
  }
  ctx.setOutput(0, OnnxValue::ofValue(r, DType::kFloat));
  return success();
}
LogicalResult convertGlobalAveragePool(NodeContext &ctx) { return convertGlobalPool(ctx, false); }

// GlobalLpPool: (sum over the spatial dims of |x|^p)^(1/p), p > 0 (default 2).
LogicalResult convertGlobalLpPool(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  const OnnxValue &x = ctx.input(0);
  if (x.rank() < 3)
    return ctx.error() << "input must have rank 3 or more (N, C, spatial...)";
  double p = static_cast<double>(ctx.attrInt("p", 2));
  if (p <= 0)
    return ctx.error() << "p " << p << " must be positive";
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < x.rank(); ++d)
    axes.push_back(d);
  // |x|^p and s^(1/p) as exp(e log(v)) (v >= 0: log 0 = -inf gives 0).
  auto power = [](OpBuilder &b, Location l, Value v, double e) -> Value {
    if (e == 1.0)
      return v;
    if (e == 2.0)
      return arith::MulFOp::create(b, l, v, v);
    return math::ExpOp::create(b, l, arith::MulFOp::create(b, l, floatConst(b, l, e), math::LogOp::create(b, l, v)));
  };
  auto pre = elementwise(ctx, {&x}, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return power(b, l, math::AbsFOp::create(b, l, a[0]), p);
  });
  if (failed(pre))
    return failure();
  OnnxValue sum = OnnxValue::ofValue(reduce(ctx, pre->value, axes, ReduceKind::kSum), DType::kFloat);
  auto post = elementwise(ctx, {&sum}, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return p == 2.0 ? math::SqrtOp::create(b, l, a[0]).getResult() : power(b, l, a[0], 1.0 / p);
  });
  if (failed(post))
    return failure();
  ctx.setOutput(0, *post);
  return success();
}
LogicalResult convertGlobalMaxPool(NodeContext &ctx) { return convertGlobalPool(ctx, true); }

// The 2-D convolution of `input` (NCHW, already padded for `w`) by `weight` ([F, C/group, kh, kw])
// into `init` ([N, F, OH, OW]): the named linalg convolutions, or the grouped generic.
Value convolvePadded(NodeContext &ctx, Value input, const OnnxValue &weight, Value init, const Window &w,
                     int64_t group, DType acc) {
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  auto outType = cast<RankedTensorType>(init.getType());
  int64_t n = outType.getDimSize(0), f = outType.getDimSize(1), c = cast<RankedTensorType>(input.getType()).getDimSize(1);
  std::vector<int64_t> outShape(outType.getShape().begin(), outType.getShape().end());
  const std::vector<int64_t> &w4 = weight.shape;
  Value out;
  // The named convolutions widen int8 operands to the int32 accumulator (sign-extending).
  if (group == 1) {
    out = linalg::Conv2DNchwFchwOp::create(b, ctx.loc, TypeRange{outType},
                                           ValueRange{input, materialize(ctx, weight)}, ValueRange{init},
                                           i64Pair(b, w.stride), i64Pair(b, w.dilation))
              .getResult(0);
  } else if (group == c && f == c) {
    Value filter = materialize(ctx, reshaped(ctx, weight, {c, w4[2], w4[3]}));
    out = linalg::DepthwiseConv2DNchwChwOp::create(b, ctx.loc, TypeRange{outType}, ValueRange{input, filter},
                                                   ValueRange{init}, i64Pair(b, w.stride),
                                                   i64Pair(b, w.dilation))
              .getResult(0);
  } else {
    // Grouped, with the group as a loop of its own: image [N, G, C/G, H, W], filter
    // [G, F/G, C/G, kh, kw] and output [N, G, F/G, OH, OW] are views. Every indexing map stays
    // linear: tiling computes a slice's size as map(tile - 1) + 1, which a floordiv on the output
    // channel (the group of a channel) breaks whenever a tile starts inside a group.
    int64_t fg = f / group, cg = c / group;
    auto pType = cast<RankedTensorType>(input.getType());
    Value image = reshapeView(b, ctx.loc, input, {n, group, cg, pType.getDimSize(2), pType.getDimSize(3)});
    Value filter = materialize(ctx, reshaped(ctx, weight, {group, fg, cg, w4[2], w4[3]}));
    std::vector<int64_t> groupedShape = {n, group, fg, w.out[0], w.out[1]};
    Value groupedInit = reshapeView(b, ctx.loc, init, groupedShape);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
    // Loops: n, g, fo, oh, ow | ci, kh, kw.
    SmallVector<AffineMap> maps = {
        AffineMap::get(8, 0, {d(0), d(1), d(5), d(3) * w.stride[0] + d(6) * w.dilation[0],
                              d(4) * w.stride[1] + d(7) * w.dilation[1]}, mc),
        AffineMap::get(8, 0, {d(1), d(2), d(5), d(6), d(7)}, mc),
        AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, mc)};
    SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    Value grouped = linalg::GenericOp::create(b, ctx.loc, TypeRange{tensorType(mc, groupedShape, acc)},
                                              ValueRange{image, filter}, ValueRange{groupedInit}, maps, iterators,
                                              [](OpBuilder &nb, Location nl, ValueRange a) {
                                                yieldMultiplyAccumulate(nb, nl, a);
                                              })
                        .getResult(0);
    out = reshapeView(b, ctx.loc, grouped, outShape);
  }
  return out;
}

// ConvTranspose as the stride-1 convolution that is its adjoint: the input with stride - 1
// zeros between its elements and d(k - 1) - pad around them (a negative amount crops), by the
// weight flipped in space with its input and output channels swapped per group.
LogicalResult convertConvTranspose(NodeContext &ctx) {
  if (failed(requireFloatInput(ctx)) || failed(ctx.requireFloatInputs({1, 2})))
    return failure();
  const OnnxValue &x = ctx.input(0), &wv = ctx.input(1);
  if (x.rank() != 3 && x.rank() != 4)
    return ctx.error() << "input has rank " << x.rank() << "; Hexir supports 1-D and 2-D convolutions (rank 3 or 4, NCHW)";
  if (wv.rank() != x.rank())
    return ctx.error() << "weight rank " << wv.rank() << " differs from input rank " << x.rank();
  int64_t spatial = x.rank() - 2, group = ctx.attrInt("group", 1), c = x.shape[1];
  if (group <= 0 || c % group != 0 || wv.shape[0] != c)
    return ctx.error() << "weight " << shapeString(wv.shape) << " does not match input " << shapeString(x.shape)
                       << " with group " << group << " (ConvTranspose's weight is [C, F/group, k...])";
  int64_t fg = wv.shape[1], f = fg * group, cg = c / group;
  auto kernelOr = convolutionKernel(ctx, wv);
  if (failed(kernelOr))
    return failure();
  std::vector<int64_t> kernel = *kernelOr;
  std::vector<int64_t> strides = windowAttr(ctx, "strides", 1, spatial), dilations = windowAttr(ctx, "dilations", 1, spatial),
                       pads = windowAttr(ctx, "pads", 0, 2 * spatial), outPad = windowAttr(ctx, "output_padding", 0, spatial),
                       outShapeAttr = ctx.attrInts("output_shape");
  if (static_cast<int64_t>(strides.size()) != spatial || static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial || static_cast<int64_t>(outPad.size()) != spatial)
    return ctx.error() << "strides, dilations, pads or output_padding do not match " << spatial << " spatial dimensions";
  // output_shape may list the spatial dims only or the whole shape.
  if (static_cast<int64_t>(outShapeAttr.size()) == x.rank())
    outShapeAttr.erase(outShapeAttr.begin(), outShapeAttr.begin() + 2);
  if (!outShapeAttr.empty() && static_cast<int64_t>(outShapeAttr.size()) != spatial)
    return ctx.error() << "output_shape has " << outShapeAttr.size() << " values for " << spatial << " spatial dimensions";
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" && autoPad != "VALID")
    return ctx.error() << "unsupported attribute auto_pad='" << autoPad << "'";
  // In the 2-D slots (a 1-D op uses the width slot).
  Window w;
  w.oneD = spatial == 1;
  int64_t low[2] = {0, 0}, upIn[2] = {1, 1}, upStride[2] = {1, 1};
  for (int64_t d = 0; d < 2; ++d) {
    w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    w.padBegin[d] = w.padEnd[d] = 0;
    w.in[d] = w.out[d] = 1;
  }
  constexpr int64_t kMax = int64_t{1} << 31;
  for (int64_t sIdx = 0; sIdx < spatial; ++sIdx) {
    int64_t d = sIdx + (w.oneD ? 1 : 0);
    int64_t in = x.shape[2 + sIdx], k = kernel[sIdx], st = strides[sIdx], dil = dilations[sIdx], op = outPad[sIdx];
    int64_t padB = pads[sIdx], padE = pads[sIdx + spatial];
    for (int64_t v : {k, st, dil, op, padB, padE})
      if (v < 0 || v > kMax)
        return ctx.error() << "kernel, strides, dilations, pads and output_padding must be in [0, 2^31], got " << v;
    if (k == 0 || st == 0 || dil == 0)
      return ctx.error() << "kernel, strides and dilations must be positive";
    if (in == 0)
      return ctx.error() << "the input's spatial axis " << sIdx << " is empty";
    int64_t full;
    if (__builtin_mul_overflow(st, in - 1, &full) || __builtin_add_overflow(full, op + dil * (k - 1) + 1, &full) ||
        full > (int64_t{1} << 50))
      return ctx.error() << "the output's spatial axis " << sIdx << " would have more than 2^50 elements";
    int64_t target = -1;
    if (!outShapeAttr.empty())
      target = outShapeAttr[sIdx];
    if (target > (int64_t{1} << 50))
      return ctx.error() << "output_shape " << target << " is larger than 2^50";
    else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      target = in * st;
    if (target >= 0) {
      int64_t total = full - target;
      // As ONNX specifies, with floor division (a larger output_shape makes `total` negative: the
      // extra elements go at the end): SAME_UPPER puts the odd one at the end, else at the start.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      padB = autoPad == "SAME_UPPER" ? half : total - half;
      padE = total - padB;
    } else if (autoPad == "VALID") {
      padB = padE = 0;
    }
    int64_t out = full - padB - padE;
    if (out <= 0)
      return ctx.error() << "the output's spatial axis " << sIdx << " would have " << out << " elements";
    w.kernel[d] = k;
    w.dilation[d] = dil;
    w.out[d] = out;
    w.in[d] = out + dil * (k - 1);  // the upsampled, padded input the stride-1 convolution reads
    low[d] = dil * (k - 1) - padB;
    upIn[d] = in;
    upStride[d] = st;
  }
  OpBuilder &b = ctx.b;
  int64_t n = x.shape[0];
  // The upsampled and padded input: element p reads x[(p - low) / stride] where that is a whole
  // index inside x, else 0.
  Value xv = reshapeView(b, ctx.loc, materialize(ctx, x), as4D(x.shape));
  std::vector<int64_t> upShape = {n, c, w.in[0], w.in[1]};
  Value up = generate(ctx, upShape, DType::kFloat, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
    auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(nb, nl, v); };
    Value inside = arith::ConstantIntOp::create(nb, nl, 1, 1);
    SmallVector<Value> coords = {at[0], at[1]};
    for (int64_t d = 0; d < 2; ++d) {
      Value q = arith::SubIOp::create(nb, nl, at[2 + d], cst(low[d]));
      Value i = arith::DivSIOp::create(nb, nl, q, cst(upStride[d]));
      Value ok = arith::AndIOp::create(
          nb, nl, arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, q, cst(0)),
          arith::AndIOp::create(nb, nl,
                                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                                      arith::RemSIOp::create(nb, nl, q, cst(upStride[d])), cst(0)),
                                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, cst(upIn[d]))));
      inside = arith::AndIOp::create(nb, nl, inside, ok);
      coords.push_back(arith::MinSIOp::create(nb, nl, arith::MaxSIOp::create(nb, nl, i, cst(0)), cst(upIn[d] - 1)));
    }
    Value v = tensor::ExtractOp::create(nb, nl, xv, coords);
    return arith::SelectOp::create(nb, nl, inside, v, floatConst(nb, nl, 0.0));
  });
  // The weight [C, F/G, kh, kw] as a convolution's [F, C/G, kh, kw], flipped in space.
  std::vector<int64_t> w4 = as4D(wv.shape);
  int64_t kh = w4[2], kw = w4[3];
  std::vector<int64_t> flippedShape = {f, cg, kh, kw};
  OnnxValue flipped;
  if (wv.isConstant()) {
    HostTensor t = HostTensor::zeros(DType::kFloat, flippedShape);
    const HostTensor &src = *wv.constant;
    for (int64_t g = 0; g < group; ++g)
      for (int64_t fo = 0; fo < fg; ++fo)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              t.f[(((g * fg + fo) * cg + ci) * kh + i) * kw + j] =
                  src.f[(((g * cg + ci) * fg + fo) * kh + (kh - 1 - i)) * kw + (kw - 1 - j)];
    flipped = OnnxValue::ofConstant(std::move(t));
  } else {
    Value wsrc = reshapeView(b, ctx.loc, materialize(ctx, wv), w4);
    flipped = OnnxValue::ofValue(
        generate(ctx, flippedShape, DType::kFloat,
                 [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
                   auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(nb, nl, v); };
                   Value g = arith::DivUIOp::create(nb, nl, at[0], cst(fg));
                   Value fo = arith::RemUIOp::create(nb, nl, at[0], cst(fg));
                   Value ci = arith::AddIOp::create(nb, nl, arith::MulIOp::create(nb, nl, g, cst(cg)), at[1]);
                   Value i = arith::SubIOp::create(nb, nl, cst(kh - 1), at[2]);
                   Value j = arith::SubIOp::create(nb, nl, cst(kw - 1), at[3]);
                   return tensor::ExtractOp::create(nb, nl, wsrc, ValueRange{ci, fo, i, j});
                 }),
        DType::kFloat);
  }
  std::vector<int64_t> outShape = {n, f, w.out[0], w.out[1]};
  const OnnxValue *bias = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  if (bias && bias->numElements() != f)
    return ctx.error() << "bias has " << bias->numElements() << " values for " << f << " filters";
  Value init = convolutionInit(ctx, bias, outShape, DType::kFloat);
  Value out = convolvePadded(ctx, up, flipped, init, w, group, DType::kFloat);
  setWindowOutput(ctx, out, w);
  return success();
}

} // namespace

FailureOr<OnnxValue> convolveValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &wv, const OnnxValue *bias,
                                    DType acc, double padValue) {
  auto accepts = [acc](DType t) { return t == acc || (acc == DType::kInt32 && t == DType::kInt8); };
  if (!accepts(x.type) || !accepts(wv.type))
    return ctx.error() << "input and weight must be " << dtypeName(acc) << " tensors";
  if (x.rank() != 3 && x.rank() != 4)
    return ctx.error() << "input has rank " << x.rank() << "; Hexir supports 1-D and 2-D convolutions (rank 3 or 4, NCHW)";
  if (wv.rank() != x.rank())
    return ctx.error() << "weight rank " << wv.rank() << " differs from input rank " << x.rank();
  auto kernelOr = convolutionKernel(ctx, wv);
  if (failed(kernelOr))
    return failure();
  std::vector<int64_t> kernel = *kernelOr;
  Window w;
  if (failed(readWindow(ctx, x.shape, kernel, /*ceilMode=*/false, w)))
    return failure();
  int64_t group = ctx.attrInt("group", 1);
  int64_t n = x.shape[0], c = x.shape[1], f = wv.shape[0];
  if (group <= 0 || c % group != 0 || f % group != 0 || wv.shape[1] != c / group)
    return ctx.error() << "weight " << shapeString(wv.shape) << " does not match input "
                       << shapeString(x.shape) << " with group " << group;
  OpBuilder &b = ctx.b;
  std::vector<int64_t> outShape = {n, f, w.out[0], w.out[1]};

  // The bias is the accumulator's initial value.
  if (bias && bias->type != acc)
    return ctx.error() << "bias must be " << dtypeName(acc) << ", got " << dtypeName(bias->type);
  if (bias && bias->numElements() != f)
    return ctx.error() << "bias has " << bias->numElements() << " values for " << f << " filters";
  Value init = convolutionInit(ctx, bias, outShape, acc);

  Value input = padInput(ctx, reshapeView(b, ctx.loc, materialize(ctx, x), as4D(x.shape)), w, padValue);
  Value out = convolvePadded(ctx, input, reshaped(ctx, wv, as4D(wv.shape)), init, w, group, acc);
  if (w.oneD)
    out = reshapeView(b, ctx.loc, out, {n, f, w.out[1]});
  return OnnxValue::ofValue(out, acc);
}

void addConvolutionOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"AveragePool", 13, 21, convertAveragePool, "1-D, 2-D and 3-D", "auto_pad ceil_mode count_include_pad kernel_shape pads strides dilations", 1},
      {"Conv", 13, 21, convertConv, "1-D, 2-D and 3-D", "auto_pad dilations group kernel_shape pads strides", 2},
      {"ConvTranspose", 13, 21, convertConvTranspose, "1-D and 2-D",
       "auto_pad dilations group kernel_shape output_padding output_shape pads strides", 2},
      {"GlobalAveragePool", 13, 21, convertGlobalAveragePool, "", "", 1},
      {"GlobalLpPool", 13, 21, convertGlobalLpPool, "", "p", 1},
      {"GlobalMaxPool", 13, 21, convertGlobalMaxPool, "", "", 1},
      {"MaxPool", 13, 21, convertMaxPool, "1-D, 2-D and 3-D; Indices in 1-D and 2-D; int8 and uint8 in 1-D and 2-D",
       "auto_pad ceil_mode dilations kernel_shape pads storage_order strides", 1, nullptr, /*readsUnsigned=*/true},
  });
}

} // namespace hexir::onnx_import

//===- QuantizeOps.cpp - QuantizeLinear and DequantizeLinear --------------===//
//
// ONNX's linear quantization, per tensor or per axis (a scale and zero point per slice of
// `axis`), int8 or uint8:
//   QuantizeLinear   y = saturate(round_half_to_even(x / scale) + zero_point)
//   DequantizeLinear y = (x - zero_point) * scale   (x int8, uint8 or int32)
// Both fold at import when their inputs are known (a QDQ model's weights are int8 initializers
// behind a DequantizeLinear: they become f32 constants), else each is one elementwise kernel.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"
#include "Import/Onnx/Quantized.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cfenv>
#include <cmath>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

bool isByte(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// The scale and zero point checked against `x` and shaped to broadcast against it: a scalar
// (or one element) per tensor, a 1-D tensor of x's `axis` extent per axis.
struct QuantParams {
  OnnxValue scale, zeroPoint;
};

FailureOr<QuantParams> quantParams(NodeContext &ctx, const OnnxValue &x, const OnnxValue &zeroPoint) {
  const OnnxValue &scale = ctx.input(1);
  if (!isFloat(scale.type))
    return ctx.error() << "scale (input 1) must be float, got " << dtypeName(scale.type);
  if (scale.shape != zeroPoint.shape)
    return ctx.error() << "zero point (input 2) of shape " << shapeString(zeroPoint.shape)
                       << " does not match the scale's " << shapeString(scale.shape);
  QuantParams p{scale, zeroPoint};
  if (scale.numElements() == 1 && scale.rank() <= 1) {
    // Per tensor, as a scalar: a [1] scale would broadcast a scalar x to [1].
    if (scale.rank() == 1) {
      p.scale = reshaped(ctx, scale, {});
      p.zeroPoint = reshaped(ctx, zeroPoint, {});
    }
    return p;
  }
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 1, x.rank());
  if (failed(axis))
    return failure();
  if (scale.rank() != 1 || scale.shape[0] != x.shape[*axis])
    return ctx.error() << "a per-axis scale must be 1-D with the " << x.shape[*axis] << " elements of axis " << *axis
                       << " of the input (" << shapeString(x.shape) << "), got " << shapeString(scale.shape);
  std::vector<int64_t> along(x.rank(), 1);
  along[*axis] = x.shape[*axis];
  p.scale = reshaped(ctx, scale, along);
  p.zeroPoint = reshaped(ctx, zeroPoint, along);
  return p;
}

Value toFloat(OpBuilder &b, Location l, Value v, DType from) {
  Type f32 = b.getF32Type();
  return from == DType::kUInt8 ? arith::UIToFPOp::create(b, l, f32, v).getResult()
                               : arith::SIToFPOp::create(b, l, f32, v).getResult();
}

// min(max(v, lo), hi); a NaN becomes lo, never an undefined
// conversion later.
Value clampTo(OpBuilder &b, Location l, Value v, double lo, double hi) {
  // Compares and selects rather than maxnumf/minnumf: without SSE4.1 LLVM calls libm's fmaxf
  // for those, which a kernel may not.
  Value low = floatConst(b, l, lo), high = floatConst(b, l, hi);
  Value below = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ULT, v, low);  // or NaN
  Value r = arith::SelectOp::create(b, l, below, low, v);
  Value above = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, r, high);
  return arith::SelectOp::create(b, l, above, high, r);
}

// Round half to even without a libm call (roundevenf, which an x86-64 baseline CPU lacks an
// instruction for): for |v| <= 2^22 (callers clamp first), adding and subtracting 1.5 * 2^23
// rounds in the FPU's default mode.
Value roundHalfEven(OpBuilder &b, Location l, Value v) {
  Value magic = floatConst(b, l, 12582912.0);
  return arith::SubFOp::create(b, l, arith::AddFOp::create(b, l, v, magic), magic);
}

// A whole float in [-128, 255] as its byte (int8 or uint8 bits), through int32.
Value toByte(OpBuilder &b, Location l, Value v) {
  return arith::TruncIOp::create(b, l, b.getI8Type(), arith::FPToSIOp::create(b, l, b.getI32Type(), v));
}

} // namespace

FailureOr<OnnxValue> quantizeValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &scale,
                                    const OnnxValue &zeroPoint, DType out) {
  double lo = out == DType::kInt8 ? -128 : 0, hi = out == DType::kInt8 ? 127 : 255;
  auto shape = broadcastShapeOf(ctx, {&x, &scale, &zeroPoint});
  if (failed(shape))
    return failure();
  if (x.isConstant() && scale.isConstant() && zeroPoint.isConstant()) {
    HostTensor xs = expand(*x.constant, *shape), ss = expand(*scale.constant, *shape),
               zs = expand(*zeroPoint.constant, *shape);
    HostTensor y = HostTensor::zeros(out, *shape);
    std::fesetround(FE_TONEAREST);
    for (int64_t k = 0; k < y.numElements(); ++k) {
      float q = xs.f[k] / ss.f[k];
      double v = std::nearbyint(q) + static_cast<double>(zs.i[k]);
      y.i[k] = static_cast<int64_t>(std::isnan(v) ? lo : std::min(hi, std::max(lo, v)));
    }
    return OnnxValue::ofConstant(std::move(y));
  }
  return elementwise(ctx, {&x, &scale, &zeroPoint}, out, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    // Beyond +-2^22 the value saturates anyway.
    Value d = clampTo(b, l, arith::DivFOp::create(b, l, a[0], a[1]), -4194304.0, 4194304.0);
    Value v = arith::AddFOp::create(b, l, roundHalfEven(b, l, d), toFloat(b, l, a[2], out));
    return toByte(b, l, clampTo(b, l, v, lo, hi));
  });
}

FailureOr<OnnxValue> dequantizeValues(NodeContext &ctx, const OnnxValue &x, const OnnxValue &scale,
                                      const OnnxValue &zeroPoint) {
  DType from = x.type;
  return elementwise(ctx, {&x, &scale, &zeroPoint}, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value d = arith::SubFOp::create(b, l, toFloat(b, l, a[0], from), toFloat(b, l, a[2], from));
    return arith::MulFOp::create(b, l, d, a[1]);
  });
}

FailureOr<OnnxValue> shiftedToInt32(NodeContext &ctx, const OnnxValue &x, const OnnxValue &zeroPoint) {
  auto shape = broadcastShapeOf(ctx, {&x, &zeroPoint});
  if (failed(shape))
    return failure();
  if (x.isConstant() && zeroPoint.isConstant()) {
    HostTensor xs = expand(*x.constant, *shape), zs = expand(*zeroPoint.constant, *shape);
    HostTensor y = HostTensor::zeros(DType::kInt32, *shape);
    for (int64_t k = 0; k < y.numElements(); ++k)
      y.i[k] = xs.i[k] - zs.i[k];
    return OnnxValue::ofConstant(std::move(y));
  }
  DType from = x.type;
  return elementwise(ctx, {&x, &zeroPoint}, DType::kInt32, [from](OpBuilder &b, Location l, ValueRange a) -> Value {
    bool isUnsigned = from == DType::kUInt8;
    return arith::SubIOp::create(b, l, widenInt(b, l, a[0], b.getI32Type(), isUnsigned),
                                 widenInt(b, l, a[1], b.getI32Type(), isUnsigned));
  });
}

namespace {

// Whether `a` and `b` are constants of one type holding one value each, the same (a per-tensor
// scale or zero point, of any rank).
bool sameConstant(const OnnxValue &a, const OnnxValue &b) {
  if (!a.isConstant() || !b.isConstant() || a.type != b.type || a.numElements() != 1 || b.numElements() != 1)
    return false;
  return isFloat(a.type) ? a.constant->f[0] == b.constant->f[0] : a.constant->i[0] == b.constant->i[0];
}

// Whether a scale dequantizes and requantizes 8-bit values exactly: not 0 (0 / 0 saturates) and
// small enough that 255 times it is finite.
bool exactScale(const OnnxValue &scale) {
  double s = std::fabs(static_cast<double>(scale.constant->f[0]));
  return s > 0 && std::isfinite(static_cast<float>(255 * s));
}

LogicalResult convertQuantizeLinear(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be float, got " << dtypeName(x.type);
  // No zero point: uint8 zero, as ONNX says.
  OnnxValue zero = ctx.hasInput(2) ? ctx.input(2)
                                   : OnnxValue::ofConstant(HostTensor::zeros(DType::kUInt8, ctx.input(1).shape));
  if (!isByte(zero.type))
    return ctx.error() << "zero point (input 2) must be int8 or uint8, got " << dtypeName(zero.type);
  FailureOr<QuantParams> p = quantParams(ctx, x, zero);
  if (failed(p))
    return failure();
  // Requantizing a dequantized tensor with its own scale and zero point gives its integers back,
  // exactly (|q - zp| <= 255: the f32 product and quotient round to q - zp), as after an int8
  // max pooling; to the other 8-bit type with the zero point moved by 128 (a uint8 tensor
  // pooled as int8), its integers with their sign bits flipped.
  if (const DequantizedSource *d = x.dequantized.get();
      d && d->axis < 0 && isByte(d->q.type) && !d->q.isConstant() && sameConstant(d->scale, ctx.input(1)) &&
      exactScale(d->scale) && d->zeroPoint.isConstant() && d->zeroPoint.numElements() == 1 && zero.isConstant() &&
      zero.numElements() == 1) {
    int64_t shift = d->q.type == zero.type ? 0 : zero.type == DType::kUInt8 ? 128 : -128;
    if (d->zeroPoint.constant->i[0] + shift == zero.constant->i[0]) {
      FailureOr<DequantizedSource> same = as8Bit(ctx, *d, zero.type);
      if (failed(same))
        return failure();
      ctx.setOutput(0, same->q);
      return success();
    }
  }
  FailureOr<OnnxValue> y = quantizeValues(ctx, x, p->scale, p->zeroPoint, zero.type);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult convertDequantizeLinear(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isByte(x.type) && x.type != DType::kInt32)
    return ctx.error() << "input must be int8, uint8 or int32, got " << dtypeName(x.type);
  OnnxValue zero = ctx.hasInput(2) ? ctx.input(2) : OnnxValue::ofConstant(HostTensor::zeros(x.type, ctx.input(1).shape));
  if (zero.type != x.type)
    return ctx.error() << "zero point (input 2) must be " << dtypeName(x.type) << " as the input, got "
                       << dtypeName(zero.type);
  FailureOr<QuantParams> p = quantParams(ctx, x, zero);
  if (failed(p))
    return failure();
  // The int8 source, for the integer kernels only (it holds a copy of a constant x).
  std::shared_ptr<DequantizedSource> source;
  if (ctx.int8Kernels) {
    source = std::make_shared<DequantizedSource>(DequantizedSource{x, ctx.input(1), zero, -1});
    if (ctx.input(1).numElements() != 1 || ctx.input(1).rank() > 1)
      source->axis = *ctx.axisAttr("axis", 1, x.rank());  // checked by quantParams
  }
  if (x.isConstant() && p->scale.isConstant() && p->zeroPoint.isConstant()) {
    HostTensor y = HostTensor::zeros(DType::kFloat, x.shape);
    HostTensor ss = expand(*p->scale.constant, x.shape), zs = expand(*p->zeroPoint.constant, x.shape);
    for (int64_t k = 0; k < y.numElements(); ++k) {
      // In float, as ONNX's reference: exact for 8 bits.
      float d = static_cast<float>(x.constant->i[k]) - static_cast<float>(zs.i[k]);
      y.f[k] = d * ss.f[k];
    }
    OnnxValue out = OnnxValue::ofConstant(std::move(y));
    out.dequantized = source;
    ctx.setOutput(0, std::move(out));
    return success();
  }
  FailureOr<OnnxValue> y = dequantizeValues(ctx, x, p->scale, p->zeroPoint);
  if (failed(y))
    return failure();
  y->dequantized = source;
  ctx.setOutput(0, *y);
  return success();
}

// DynamicQuantizeLinear: uint8 with a scale and zero point from x's range (which always holds 0):
//   scale = (max(x, 0) - min(x, 0)) / 255, zero_point = round(clamp(-min(x, 0) / scale, 0, 255)).
// All of x zero (scale 0): zero point 0 and y 0.
LogicalResult convertDynamicQuantizeLinear(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be float, got " << dtypeName(x.type);
  if (x.numElements() == 0)
    return ctx.error() << "input has no elements: its range is undefined";
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.rank(); ++d)
    all.push_back(d);
  Value v = materialize(ctx, x);
  OnnxValue lo = OnnxValue::ofValue(reshapeView(ctx.b, ctx.loc, reduce(ctx, v, all, ReduceKind::kMin), {}),
                                    DType::kFloat);
  OnnxValue hi = OnnxValue::ofValue(reshapeView(ctx.b, ctx.loc, reduce(ctx, v, all, ReduceKind::kMax), {}),
                                    DType::kFloat);
  auto scale = elementwise(ctx, {&lo, &hi}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value zero = floatConst(b, l, 0.0);
    Value range = arith::SubFOp::create(b, l, arith::MaximumFOp::create(b, l, a[1], zero),
                                        arith::MinimumFOp::create(b, l, a[0], zero));
    return arith::DivFOp::create(b, l, range, floatConst(b, l, 255.0));
  });
  if (failed(scale))
    return failure();
  auto zeroPoint = elementwise(ctx, {&lo, &*scale}, DType::kUInt8, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value zero = floatConst(b, l, 0.0);
    Value z = arith::DivFOp::create(b, l, arith::NegFOp::create(b, l, arith::MinimumFOp::create(b, l, a[0], zero)), a[1]);
    // Clamped first (a 0 / 0 is NaN: it becomes 0), then rounded.
    return toByte(b, l, roundHalfEven(b, l, clampTo(b, l, z, 0.0, 255.0)));
  });
  if (failed(zeroPoint))
    return failure();
  FailureOr<OnnxValue> y = quantizeValues(ctx, x, *scale, *zeroPoint, DType::kUInt8);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  if (ctx.hasOutput(1))
    ctx.setOutput(1, *scale);
  if (ctx.hasOutput(2))
    ctx.setOutput(2, *zeroPoint);
  return success();
}

// saturate(round_half_even(acc * multiplier) + zero_point) of an int32 accumulator: QuantizeLinear's
// kernel with a scale of 1, the product in float32.
FailureOr<OnnxValue> requantize(NodeContext &ctx, const OnnxValue &acc, const OnnxValue &multiplier,
                                const OnnxValue &zeroPoint, DType out) {
  auto scaled = elementwise(ctx, {&acc, &multiplier}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(b, l, arith::SIToFPOp::create(b, l, b.getF32Type(), a[0]), a[1]);
  });
  if (failed(scaled))
    return failure();
  OnnxValue one = OnnxValue::ofConstant(HostTensor::scalarFloat(1.0f));
  return quantizeValues(ctx, *scaled, one, zeroPoint, out);
}

// A matrix input's zero point as it broadcasts against the input: a's per row ([M] -> [M, 1]),
// b's per column ([N] as it is).
FailureOr<OnnxValue> matrixZeroPoint(NodeContext &ctx, size_t index, const OnnxValue &x, bool perRow) {
  if (!ctx.hasInput(index))
    return OnnxValue::ofConstant(HostTensor::zeros(x.type, {}));
  const OnnxValue &z = ctx.input(index);
  if (z.type != x.type)
    return ctx.error() << "zero point (input " << index << ") must be " << dtypeName(x.type) << " as its matrix, got "
                       << dtypeName(z.type);
  if (z.numElements() == 1)
    return reshaped(ctx, z, {});
  if (x.rank() < 2)
    return ctx.error() << "zero point (input " << index << ") of shape " << shapeString(z.shape)
                       << " must be one value for a matrix of rank " << x.rank();
  int64_t along = perRow ? x.shape[x.rank() - 2] : x.shape[x.rank() - 1];
  if (z.rank() != 1 || z.shape[0] != along)
    return ctx.error() << "zero point (input " << index << ") of shape " << shapeString(z.shape) << " is neither one "
                       << "value nor one per " << (perRow ? "row" : "column") << " (" << along << ")";
  return perRow ? reshaped(ctx, z, {along, 1}) : z;
}

// (a - a_zero_point) x (b - b_zero_point) in int32. With --int8-kernels (matrices of rank 2 or
// more), as an unsigned-by-signed byte product with run-time row and column sums
// (zeroPointProduct): VNNI's dot products where the target has them, vpmaddwd pairs on other x86
// CPUs. Otherwise both are shifted to int32 first.
FailureOr<OnnxValue> integerProduct(NodeContext &ctx, size_t a, size_t aZero, size_t b, size_t bZero) {
  const OnnxValue &av = ctx.input(a), &bv = ctx.input(b);
  if (!isByte(av.type) || !isByte(bv.type))
    return ctx.error() << "matrices must be int8 or uint8, got " << dtypeName(av.type) << " and " << dtypeName(bv.type);
  FailureOr<OnnxValue> az = matrixZeroPoint(ctx, aZero, av, /*perRow=*/true);
  FailureOr<OnnxValue> bz = matrixZeroPoint(ctx, bZero, bv, /*perRow=*/false);
  if (failed(az) || failed(bz))
    return failure();
  if (ctx.int8Kernels && av.rank() >= 2 && bv.rank() >= 2 && !(av.isConstant() && bv.isConstant()))
    return zeroPointProduct(ctx, av, *az, bv, *bz);
  FailureOr<OnnxValue> as = shiftedToInt32(ctx, av, *az);
  FailureOr<OnnxValue> bs = shiftedToInt32(ctx, bv, *bz);
  if (failed(as) || failed(bs))
    return failure();
  return matmulValues(ctx, *as, *bs, DType::kInt32);
}

LogicalResult convertMatMulInteger(NodeContext &ctx) {
  FailureOr<OnnxValue> y = integerProduct(ctx, 0, 2, 1, 3);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

// QLinearMatMul: the int32 product times the multiplier a_scale * b_scale / y_scale (in
// float32), requantized: y = saturate(round_half_even(product * multiplier) + y_zero_point),
// QuantizeLinear's kernel with a scale of 1.
LogicalResult convertQLinearMatMul(NodeContext &ctx) {
  for (size_t i : {1, 4, 6})
    if (!isFloat(ctx.input(i).type) || ctx.input(i).numElements() != 1)
      return ctx.error() << "scale (input " << i << ") must be one float (per-tensor scales only)";
  const OnnxValue &yz = ctx.input(7);
  if (!isByte(yz.type) || yz.numElements() != 1)
    return ctx.error() << "output zero point (input 7) must be one int8 or uint8";
  FailureOr<OnnxValue> product = integerProduct(ctx, 0, 2, 3, 5);
  if (failed(product))
    return failure();
  OnnxValue as = reshaped(ctx, ctx.input(1), {}), bs = reshaped(ctx, ctx.input(4), {}),
            ys = reshaped(ctx, ctx.input(6), {}), zero = reshaped(ctx, yz, {});
  auto multiplier = elementwise(ctx, {&as, &bs, &ys}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
  });
  if (failed(multiplier))
    return failure();
  FailureOr<OnnxValue> y = requantize(ctx, *product, *multiplier, zero, yz.type);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

// A weight's zero point for ConvInteger and QLinearConv: one, or one per output channel shaped
// [M, 1, ...] against the weight.
FailureOr<OnnxValue> filterZeroPoint(NodeContext &ctx, size_t index, const OnnxValue &w) {
  if (!ctx.hasInput(index))
    return OnnxValue::ofConstant(HostTensor::zeros(w.type, {}));
  const OnnxValue &z = ctx.input(index);
  if (z.type != w.type)
    return ctx.error() << "zero point (input " << index << ") must be " << dtypeName(w.type) << " as the weight, got "
                       << dtypeName(z.type);
  if (z.numElements() == 1)
    return reshaped(ctx, z, {});
  if (z.rank() != 1 || w.rank() < 1 || z.shape[0] != w.shape[0])
    return ctx.error() << "zero point (input " << index << ") of shape " << shapeString(z.shape)
                       << " is neither one value nor one per output channel (" << (w.rank() ? w.shape[0] : 0) << ")";
  std::vector<int64_t> along(w.rank(), 1);
  along[0] = w.shape[0];
  return reshaped(ctx, z, along);
}

// (x - x_zero_point) (*) (w - w_zero_point) in int32, from `bias` (int32, one per filter) or zero.
FailureOr<OnnxValue> integerConvolution(NodeContext &ctx, size_t x, size_t xZero, size_t w, size_t wZero,
                                        const OnnxValue *bias) {
  const OnnxValue &xv = ctx.input(x), &wv = ctx.input(w);
  if (!isByte(xv.type) || !isByte(wv.type))
    return ctx.error() << "input and weight must be int8 or uint8, got " << dtypeName(xv.type) << " and "
                       << dtypeName(wv.type);
  OnnxValue xz = OnnxValue::ofConstant(HostTensor::zeros(xv.type, {}));
  if (ctx.hasInput(xZero)) {
    const OnnxValue &z = ctx.input(xZero);
    if (z.type != xv.type || z.numElements() != 1)
      return ctx.error() << "input zero point (input " << xZero << ") must be one " << dtypeName(xv.type) << ", got "
                         << dtypeName(z.type) << " " << shapeString(z.shape);
    xz = reshaped(ctx, z, {});
  }
  FailureOr<OnnxValue> wz = filterZeroPoint(ctx, wZero, wv);
  if (failed(wz))
    return failure();
  // The shifted input pads with zero: the original's padding is its zero point, as ONNX says.
  FailureOr<OnnxValue> xs = shiftedToInt32(ctx, xv, xz);
  FailureOr<OnnxValue> ws = shiftedToInt32(ctx, wv, *wz);
  if (failed(xs) || failed(ws))
    return failure();
  return convolveValues(ctx, *xs, *ws, bias, DType::kInt32);
}

LogicalResult convertConvInteger(NodeContext &ctx) {
  FailureOr<OnnxValue> y = integerConvolution(ctx, 0, 2, 1, 3, nullptr);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

// QLinearConv: the int32 convolution (from the int32 bias B, whose scale is x_scale * w_scale)
// times x_scale * w_scale / y_scale (w_scale per tensor or per output channel), requantized as
// QLinearMatMul.
LogicalResult convertQLinearConv(NodeContext &ctx) {
  for (size_t i : {1, 6})
    if (!isFloat(ctx.input(i).type) || ctx.input(i).numElements() != 1)
      return ctx.error() << "scale (input " << i << ") must be one float";
  const OnnxValue &wv = ctx.input(3), &ws = ctx.input(4);
  int64_t filters = wv.rank() ? wv.shape[0] : 0;
  if (!isFloat(ws.type) || !(ws.numElements() == 1 || (ws.rank() == 1 && ws.shape[0] == filters)))
    return ctx.error() << "weight scale (input 4) must be float, one value or one per output channel (" << filters
                       << "), got " << shapeString(ws.shape);
  const OnnxValue &yz = ctx.input(7);
  if (!isByte(yz.type) || yz.numElements() != 1)
    return ctx.error() << "output zero point (input 7) must be one int8 or uint8";
  const OnnxValue *bias = ctx.hasInput(8) ? &ctx.input(8) : nullptr;
  if (bias && bias->type != DType::kInt32)
    return ctx.error() << "bias (input 8) must be int32, got " << dtypeName(bias->type);
  FailureOr<OnnxValue> acc = integerConvolution(ctx, 0, 2, 3, 5, bias);
  if (failed(acc))
    return failure();
  // One multiplier per output channel, shaped [M, 1, ...] against the NCHW (or NCW) result.
  std::vector<int64_t> along(acc->rank() - 1, 1);
  along[0] = ws.numElements() == 1 ? 1 : filters;
  OnnxValue xs = reshaped(ctx, ctx.input(1), {}), wss = reshaped(ctx, ws, along), ys = reshaped(ctx, ctx.input(6), {}),
            zero = reshaped(ctx, yz, {});
  auto multiplier = elementwise(ctx, {&xs, &wss, &ys}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
  });
  if (failed(multiplier))
    return failure();
  FailureOr<OnnxValue> y = requantize(ctx, *acc, *multiplier, zero, yz.type);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void addQuantizeOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"ConvInteger", 13, 21, convertConvInteger, "1-D and 2-D, weight zero point per tensor or per output channel", "auto_pad dilations group kernel_shape pads strides", 2, nullptr, true},
      {"DequantizeLinear", 13, 21, convertDequantizeLinear, "", "axis", 2, nullptr, true},
      {"DynamicQuantizeLinear", 13, 21, convertDynamicQuantizeLinear, "", "", 1, nullptr, true},
      {"MatMulInteger", 13, 21, convertMatMulInteger, "int8/uint8, zero points per tensor, row (a) or column (b)", "", 2, nullptr, true},
      {"QLinearConv", 13, 21, convertQLinearConv, "1-D and 2-D, weight scale and zero point per tensor or per output channel", "auto_pad dilations group kernel_shape pads strides", 8, nullptr, true},
      {"QLinearMatMul", 13, 21, convertQLinearMatMul, "per-tensor scales", "", 8, nullptr, true},
      {"QuantizeLinear", 13, 21, convertQuantizeLinear, "float input", "axis", 2, nullptr, true},
  });
}

} // namespace hexir::onnx_import

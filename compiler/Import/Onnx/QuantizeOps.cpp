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
  int64_t axis = -1;  // -1: per tensor
};

FailureOr<QuantParams> quantParams(NodeContext &ctx, const OnnxValue &x, const OnnxValue &zeroPoint) {
  const OnnxValue &scale = ctx.input(1);
  if (!isFloat(scale.type))
    return ctx.error() << "scale (input 1) must be float, got " << dtypeName(scale.type);
  if (scale.shape != zeroPoint.shape)
    return ctx.error() << "zero point (input 2) of shape " << shapeString(zeroPoint.shape)
                       << " does not match the scale's " << shapeString(scale.shape);
  QuantParams p{scale, zeroPoint};
  if (scale.numElements() == 1 && scale.rank() <= 1)
    return p;  // per tensor: broadcasts as it is
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 1, x.rank());
  if (failed(axis))
    return failure();
  if (scale.rank() != 1 || scale.shape[0] != x.shape[*axis])
    return ctx.error() << "a per-axis scale must be 1-D with the " << x.shape[*axis] << " elements of axis " << *axis
                       << " of the input (" << shapeString(x.shape) << "), got " << shapeString(scale.shape);
  std::vector<int64_t> along(x.rank(), 1);
  along[*axis] = x.shape[*axis];
  p.axis = *axis;
  p.scale = reshaped(ctx, scale, along);
  p.zeroPoint = reshaped(ctx, zeroPoint, along);
  return p;
}

// Element k of x's parameter `t` (per tensor: its one element; per axis: the one of k's slice).
int64_t paramIndex(const std::vector<int64_t> &shape, int64_t axis, int64_t k) {
  if (axis < 0)
    return 0;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return (k / inner) % shape[axis];
}

Value toFloat(OpBuilder &b, Location l, Value v, DType from) {
  Type f32 = b.getF32Type();
  return from == DType::kUInt8 ? arith::UIToFPOp::create(b, l, f32, v).getResult()
                               : arith::SIToFPOp::create(b, l, f32, v).getResult();
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
  DType out = zero.type;
  FailureOr<QuantParams> p = quantParams(ctx, x, zero);
  if (failed(p))
    return failure();
  double lo = out == DType::kInt8 ? -128 : 0, hi = out == DType::kInt8 ? 127 : 255;
  if (x.isConstant() && p->scale.isConstant() && p->zeroPoint.isConstant()) {
    HostTensor y = HostTensor::zeros(out, x.shape);
    std::fesetround(FE_TONEAREST);
    for (int64_t k = 0; k < y.numElements(); ++k) {
      int64_t j = paramIndex(x.shape, p->axis, k);
      float q = x.constant->f[k] / p->scale.constant->f[j];
      double v = std::nearbyint(q) + static_cast<double>(p->zeroPoint.constant->i[j]);
      y.i[k] = static_cast<int64_t>(std::isnan(v) ? lo : std::min(hi, std::max(lo, v)));
    }
    ctx.setOutput(0, OnnxValue::ofConstant(std::move(y)));
    return success();
  }
  auto y = elementwise(ctx, {&x, &p->scale, &p->zeroPoint}, out, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    // Round half to even without a libm call (roundevenf, which an x86-64 baseline CPU lacks
    // an instruction for): within +-2^22, adding and subtracting 1.5 * 2^23 rounds in the FPU's
    // default mode. Beyond it the value saturates anyway; a NaN goes to the lowest bound here.
    Value d = arith::DivFOp::create(b, l, a[0], a[1]);
    d = arith::MinNumFOp::create(b, l, arith::MaxNumFOp::create(b, l, d, floatConst(b, l, -4194304.0)),
                                 floatConst(b, l, 4194304.0));
    Value magic = floatConst(b, l, 12582912.0);
    Value rounded = arith::SubFOp::create(b, l, arith::AddFOp::create(b, l, d, magic), magic);
    Value v = arith::AddFOp::create(b, l, rounded, toFloat(b, l, a[2], out));
    // Saturate; a NaN becomes the lowest value (maxnumf picks the number), never an undefined
    // conversion.
    v = arith::MinNumFOp::create(b, l, arith::MaxNumFOp::create(b, l, v, floatConst(b, l, lo)), floatConst(b, l, hi));
    Value wide = arith::FPToSIOp::create(b, l, b.getI32Type(), v);
    return arith::TruncIOp::create(b, l, b.getI8Type(), wide);
  });
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
  if (x.isConstant() && p->scale.isConstant() && p->zeroPoint.isConstant()) {
    HostTensor y = HostTensor::zeros(DType::kFloat, x.shape);
    for (int64_t k = 0; k < y.numElements(); ++k) {
      int64_t j = paramIndex(x.shape, p->axis, k);
      // In float, as ONNX's reference: exact for 8 bits.
      float d = static_cast<float>(x.constant->i[k]) - static_cast<float>(p->zeroPoint.constant->i[j]);
      y.f[k] = d * p->scale.constant->f[j];
    }
    ctx.setOutput(0, OnnxValue::ofConstant(std::move(y)));
    return success();
  }
  DType from = x.type;
  auto y = elementwise(ctx, {&x, &p->scale, &p->zeroPoint}, DType::kFloat,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value d = arith::SubFOp::create(b, l, toFloat(b, l, a[0], from), toFloat(b, l, a[2], from));
                         return arith::MulFOp::create(b, l, d, a[1]);
                       });
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void addQuantizeOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"DequantizeLinear", 13, 17, convertDequantizeLinear, "", "axis", 2},
      {"QuantizeLinear", 13, 17, convertQuantizeLinear, "float input", "axis", 2},
  });
}

} // namespace hexir::onnx_import

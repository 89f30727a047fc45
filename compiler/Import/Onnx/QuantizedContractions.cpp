//===- QuantizedContractions.cpp - QDQ Conv, MatMul and Gemm on the integers --===//
//
// A QDQ model (ONNX Runtime's quantize_static) computes Conv, MatMul and Gemm in float32 on
// DequantizeLinear's copies of int8 tensors:
//   y = sum_k ((xq - zx) * sx) * (wq * sw[n]) + bias[n]
// with the activation per tensor (sx, zx) and the weight symmetric (zero point 0) per tensor or
// per output channel. The same sum, exactly, is
//   y = (sum_k xq * wq + corr[n]) * (sx * sw[n]) + bias[n],  corr[n] = -zx * sum_k wq[k, n]
// an int8 x int8 contraction accumulating in int32, whose correction is a constant, and a
// float32 epilogue. Computed so, the operands stay int8 (a quarter of the bytes), the f32
// copies are never made, and dispatch formation fuses the epilogue with what follows (ReLU,
// the next QuantizeLinear) into one kernel that reads the int32 accumulators and writes int8;
// on the host that kernel is the contraction's own, which narrows each register tile of
// accumulators (no int32 tensor exists; TargetDescription::narrowingEpilogues). A convolution
// pads xq with zx, which the correction cancels as the float graph's zero padding. MatMul and
// Gemm read the activation as unsigned bytes xq + 128, whose products with the signed weights
// are a VNNI dot product's or, without VNNI, a vpmaddwd's on the bytes widened to int16
// (PackMatmulWeights packs the weights in groups of four or in pairs for them); the correction
// is then -(zx + 128) * sum_k wq.
//
// A uint8 activation (U8S8) is the same: a convolution reads it as int8 (xq - 128, zero point
// zx - 128), a matrix product as it is. A MatMul of two run-time activations (attention) runs
// on the integers with run-time row and column sums (quantizedActivationProduct). Other forms
// (per-axis activations, a weight zero point, a Gemm's run-time B, a 1-D operand of a product
// of two activations) keep the float lowering on the dequantized copies. So does everything
// with --no-int8-kernels, the default where the target has neither VNNI nor vpmaddwd pairs
// (CUDA; x86 CPUs with AVX but no AVX2): there the integer kernels widen to int32 multiplies
// (vpmulld, one a cycle) and run about 2x slower than the packed f32 FMA kernels. VNNI's
// vpdpbusd (64 multiply-adds an instruction) makes them 3-4x faster than f32, pairs about as
// fast with a quarter of the memory traffic.
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/Quantized.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace hexir::onnx_import {

const DequantizedSource *int8Activation(const OnnxValue &v) {
  const DequantizedSource *d = v.dequantized.get();
  if (!d || (d->q.type != DType::kInt8 && d->q.type != DType::kUInt8) || d->q.isConstant() || d->axis >= 0 ||
      !d->scale.isConstant() || !d->zeroPoint.isConstant())
    return nullptr;
  return d;
}

namespace {

// `v` (int8 or uint8) as the 8-bit type `to`: itself, or with its sign bits flipped (v - 128 or
// v + 128, an elementwise op that fuses into its producer).
FailureOr<OnnxValue> asByteType(NodeContext &ctx, const OnnxValue &v, DType to) {
  if (v.type == to)
    return v;
  OnnxValue signBit = OnnxValue::ofConstant(HostTensor::fromInts({-128}, {}, DType::kInt8));
  return elementwise(ctx, {&v, &signBit}, to, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::XOrIOp::create(b, l, a[0], a[1]);
  });
}

} // namespace

FailureOr<DequantizedSource> as8Bit(NodeContext &ctx, const DequantizedSource &x, DType to) {
  if (x.q.type == to)
    return x;
  DequantizedSource s = x;
  FailureOr<OnnxValue> flipped = asByteType(ctx, x.q, to);
  if (failed(flipped))
    return failure();
  s.q = *flipped;
  int64_t zx = x.zeroPoint.constant->i[0];
  s.zeroPoint =
      OnnxValue::ofConstant(HostTensor::fromInts({to == DType::kInt8 ? zx - 128 : zx + 128}, x.zeroPoint.shape, to));
  return s;
}

namespace {

// The int8 weight behind `v`: constant, symmetric (every zero point 0), per tensor or along
// `outAxis` (the output channels).
const DequantizedSource *int8Weight(const OnnxValue &v, int64_t outAxis) {
  const DequantizedSource *d = v.dequantized.get();
  if (!d || d->q.type != DType::kInt8 || !d->q.isConstant() || !d->scale.isConstant() || !d->zeroPoint.isConstant())
    return nullptr;
  if (d->axis >= 0 && d->axis != outAxis)
    return nullptr;
  for (int64_t z : d->zeroPoint.constant->i)
    if (z != 0)
      return nullptr;
  return d;
}

// The int8 activation (input 0) and weight (input 1, output channels along `outAxis`) of an op
// computed on the integers: none without --int8-kernels or where either is of another form.
struct Int8Operands {
  const DequantizedSource *x, *w;
};
std::optional<Int8Operands> int8Operands(NodeContext &ctx, int64_t outAxis) {
  if (!ctx.int8Kernels)
    return std::nullopt;
  const DequantizedSource *x = int8Activation(ctx.input(0));
  const DequantizedSource *w = int8Weight(ctx.input(1), outAxis);
  if (!x || !w)
    return std::nullopt;
  return Int8Operands{x, w};
}

// -zx * sum_k wq[c * channelStride + k * stride] for each of `channels` output channels, k over
// `reduction` steps: the constant correction of an activation with zero point zx.
HostTensor correction(const HostTensor &wq, int64_t zx, int64_t channels, int64_t channelStride, int64_t reduction,
                      int64_t stride) {
  HostTensor corr = HostTensor::zeros(DType::kInt32, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    int64_t sum = 0;
    for (int64_t k = 0; k < reduction; ++k)
      sum += wq.i[c * channelStride + k * stride];
    corr.i[c] = -zx * sum;
  }
  return corr;
}

// sx * sw[n] for each of `n` output channels, in float32 as the float graph's factors.
HostTensor channelScales(const DequantizedSource &x, const DequantizedSource &w, int64_t n) {
  HostTensor s = HostTensor::zeros(DType::kFloat, {n});
  float sx = x.scale.constant->f[0];
  for (int64_t c = 0; c < n; ++c)
    s.f[c] = sx * w.scale.constant->f[w.axis >= 0 ? c : 0];
  return s;
}

// y = float(acc [+ corr]) * scale [+ bias], all broadcasting against acc.
FailureOr<OnnxValue> dequantizeAccumulator(NodeContext &ctx, const OnnxValue &acc, const OnnxValue *corr,
                                           const OnnxValue &scale, const OnnxValue *bias) {
  std::vector<const OnnxValue *> ins = {&acc, &scale};
  if (corr)
    ins.push_back(corr);
  if (bias)
    ins.push_back(bias);
  bool hasCorr = corr != nullptr, hasBias = bias != nullptr;
  return elementwise(ctx, ins, DType::kFloat, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value sum = hasCorr ? arith::AddIOp::create(b, l, a[0], a[2]).getResult() : a[0];
    Value y = arith::MulFOp::create(b, l, arith::SIToFPOp::create(b, l, b.getF32Type(), sum), a[1]);
    return hasBias ? arith::AddFOp::create(b, l, y, a[hasCorr ? 3 : 2]).getResult() : y;
  });
}

} // namespace

FailureOr<std::optional<OnnxValue>> quantizedConv(NodeContext &ctx) {
  std::optional<Int8Operands> ops = int8Operands(ctx, 0);
  if (!ops || ops->w->q.rank() < 3)
    return std::optional<OnnxValue>();
  // Convolutions take signed images (linalg's named convolutions extend both operands signed).
  FailureOr<DequantizedSource> signedX = as8Bit(ctx, *ops->x, DType::kInt8);
  if (failed(signedX))
    return failure();
  const DequantizedSource *x = &*signedX, *w = ops->w;
  const OnnxValue *bias = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  if (bias && !isFloat(bias->type))
    return std::optional<OnnxValue>();
  const HostTensor &wq = *w->q.constant;
  int64_t filters = wq.shape[0], perFilter = wq.numElements() / std::max<int64_t>(filters, 1);
  int64_t zx = x->zeroPoint.constant->i[0];
  OnnxValue corrV = OnnxValue::ofConstant(correction(wq, zx, filters, perFilter, perFilter, 1));
  // The correction starts the accumulator, as a float bias does.
  FailureOr<OnnxValue> acc = convolveValues(ctx, x->q, w->q, &corrV, DType::kInt32, static_cast<double>(zx));
  if (failed(acc))
    return failure();
  std::vector<int64_t> along(acc->rank() - 1, 1);
  along[0] = filters;
  OnnxValue scale = reshaped(ctx, OnnxValue::ofConstant(channelScales(*x, *w, filters)), along);
  std::optional<OnnxValue> b;
  if (bias) {
    if (bias->numElements() != filters)
      return ctx.error() << "bias has " << bias->numElements() << " values for " << filters << " filters";
    b = reshaped(ctx, *bias, along);
  }
  FailureOr<OnnxValue> y = dequantizeAccumulator(ctx, *acc, nullptr, scale, b ? &*b : nullptr);
  if (failed(y))
    return failure();
  return std::optional<OnnxValue>(*y);
}

namespace {

// x [..., K] times the constant int8 weight wq [K, N] (as MatMul reads it), dequantized with one
// scale per column and `bias` (broadcasting against the [..., N] result) added.
FailureOr<std::optional<OnnxValue>> quantizedProduct(NodeContext &ctx, const DequantizedSource &x,
                                                     const DequantizedSource &w, const HostTensor &wq,
                                                     float alpha, const OnnxValue *bias) {
  int64_t k = wq.shape[0], n = wq.shape[1];
  // The activation as unsigned bytes (an int8 one flipped to xq + 128): the form of a VNNI dot
  // product (vpdpbusd multiplies unsigned by signed bytes). The correction subtracts the
  // unsigned zero point times sum_k wq.
  FailureOr<DequantizedSource> xu = as8Bit(ctx, x, DType::kUInt8);
  if (failed(xu))
    return failure();
  HostTensor corr = correction(wq, xu->zeroPoint.constant->i[0], n, 1, k, n);
  HostTensor scale = channelScales(x, w, n);
  if (alpha != 1.0f)
    for (float &s : scale.f)
      s *= alpha;
  FailureOr<OnnxValue> acc = matmulValues(ctx, xu->q, OnnxValue::ofConstant(wq), DType::kInt32, /*unsignedA=*/true);
  if (failed(acc))
    return failure();
  OnnxValue corrV = OnnxValue::ofConstant(std::move(corr)), scaleV = OnnxValue::ofConstant(std::move(scale));
  FailureOr<OnnxValue> y = dequantizeAccumulator(ctx, *acc, &corrV, scaleV, bias);
  if (failed(y))
    return failure();
  return std::optional<OnnxValue>(*y);
}

// sum over `axis` of `v` (int8 sign- or uint8 zero-extended) in int32, the axis kept as size 1.
OnnxValue int32Sums(NodeContext &ctx, const OnnxValue &v, int64_t axis) {
  if (v.isConstant()) {  // a constant weight's sums: at compile time (wrapping as int32 does)
    std::vector<int64_t> kept = v.shape;
    kept[axis] = 1;
    HostTensor sums = HostTensor::zeros(DType::kInt32, kept);
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < v.rank(); ++d)
      inner *= v.shape[d];
    int64_t extent = v.shape[axis], outer = v.numElements() / std::max<int64_t>(extent * inner, 1);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        uint32_t sum = 0;
        for (int64_t k = 0; k < extent; ++k)
          sum += static_cast<uint32_t>(v.constant->i[(o * extent + k) * inner + i]);
        sums.i[o * inner + i] = static_cast<int32_t>(sum);
      }
    return OnnxValue::ofConstant(std::move(sums));
  }
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value in = materialize(ctx, v);
  int64_t rank = v.rank();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  std::vector<int64_t> kept = v.shape;
  kept[axis] = 1;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d == axis ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (d != axis) {
      outShape.push_back(v.shape[d]);
      outExprs.push_back(getAffineDimExpr(d, mc));
    }
  }
  Type i32 = b.getI32Type();
  Value zero = arith::ConstantOp::create(b, ctx.loc, b.getI32IntegerAttr(0));
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, i32);
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{zero}, ValueRange{empty}).getResult(0);
  bool isUnsigned = v.type == DType::kUInt8;
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, mc), AffineMap::get(rank, 0, outExprs, mc)};
  Value sums = linalg::GenericOp::create(b, ctx.loc, TypeRange{init.getType()}, ValueRange{in}, ValueRange{init}, maps,
                                         iterators,
                                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                                           Value x = widenInt(nb, nl, a[0], i32, isUnsigned);
                                           linalg::YieldOp::create(nb, nl, arith::AddIOp::create(nb, nl, a[1], x).getResult());
                                         })
                   ->getResult(0);
  return reshaped(ctx, OnnxValue::ofValue(sums, DType::kInt32),
                  kept);
}

// A zero point as int32 (sign- or zero-extended as its 8-bit type) plus `shift`: folded when
// it is a constant.
FailureOr<OnnxValue> zeroPointInt32(NodeContext &ctx, const OnnxValue &z, int64_t shift) {
  if (z.isConstant()) {
    HostTensor t = HostTensor::zeros(DType::kInt32, z.shape);
    for (int64_t k = 0; k < t.numElements(); ++k)
      t.i[k] = z.constant->i[k] + shift;
    return OnnxValue::ofConstant(std::move(t));
  }
  OnnxValue shiftV = OnnxValue::ofConstant(HostTensor::fromInts({shift}, {}, DType::kInt32));
  bool isUnsigned = z.type == DType::kUInt8;
  return elementwise(ctx, {&z, &shiftV}, DType::kInt32, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddIOp::create(b, l, widenInt(b, l, a[0], b.getI32Type(), isUnsigned), a[1]);
  });
}

// The constant all of whose values `v` (a constant) holds, if any.
std::optional<int64_t> uniformConstant(const OnnxValue &v) {
  if (!v.isConstant() || v.numElements() == 0)
    return std::nullopt;
  for (int64_t x : v.constant->i)
    if (x != v.constant->i[0])
      return std::nullopt;
  return v.constant->i[0];
}

// MatMul of two run-time int8 activations (attention's Q x K^T and P x V in a QDQ model), each
// per tensor: the integer product of zeroPointProduct, scaled by sa * sb in the epilogue.
FailureOr<std::optional<OnnxValue>> quantizedActivationProduct(NodeContext &ctx, const DequantizedSource &x,
                                                               const DequantizedSource &y) {
  FailureOr<OnnxValue> product = zeroPointProduct(ctx, x.q, x.zeroPoint, y.q, y.zeroPoint);
  if (failed(product))
    return failure();
  float scale = x.scale.constant->f[0] * y.scale.constant->f[0];
  FailureOr<OnnxValue> out = elementwise(ctx, {&*product}, DType::kFloat, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value s = arith::ConstantOp::create(b, l, b.getF32FloatAttr(scale));
    return arith::MulFOp::create(b, l, arith::SIToFPOp::create(b, l, b.getF32Type(), a[0]), s);
  });
  if (failed(out))
    return failure();
  return std::optional<OnnxValue>(*out);
}

} // namespace

FailureOr<std::optional<OnnxValue>> quantizedMatMul(NodeContext &ctx) {
  if (!ctx.int8Kernels)
    return std::optional<OnnxValue>();
  const DequantizedSource *x = int8Activation(ctx.input(0)), *y = int8Activation(ctx.input(1));
  if (x && y && x->q.rank() >= 2 && y->q.rank() >= 2)
    return quantizedActivationProduct(ctx, *x, *y);
  std::optional<Int8Operands> ops = int8Operands(ctx, 1);
  if (!ops || ops->x->q.rank() < 2 || ops->w->q.rank() != 2)
    return std::optional<OnnxValue>();
  return quantizedProduct(ctx, *ops->x, *ops->w, *ops->w->q.constant, 1.0f, nullptr);
}

FailureOr<std::optional<OnnxValue>> quantizedGemm(NodeContext &ctx) {
  bool transB = ctx.attrInt("transB", 0) != 0;
  std::optional<Int8Operands> ops = int8Operands(ctx, transB ? 0 : 1);
  if (!ops || ctx.attrInt("transA", 0) != 0 || ops->x->q.rank() != 2 || ops->w->q.rank() != 2)
    return std::optional<OnnxValue>();
  const DequantizedSource *x = ops->x, *w = ops->w;
  float alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
  std::optional<OnnxValue> c;
  if (ctx.hasInput(2) && beta != 0.0f) {
    const OnnxValue &cv = ctx.input(2);
    // beta * C as a constant, or C itself (beta 1); other run-time forms stay in float.
    if (!isFloat(cv.type) || (beta != 1.0f && !cv.isConstant()))
      return std::optional<OnnxValue>();
    if (beta == 1.0f) {
      c = cv;
    } else {
      HostTensor t = *cv.constant;
      for (float &v : t.f)
        v *= beta;
      c = OnnxValue::ofConstant(std::move(t));
    }
  }
  const HostTensor &wq = *w->q.constant;
  std::optional<HostTensor> transposed;
  if (transB)  // [N, K] -> [K, N]
    transposed = transpose(wq, {1, 0});
  const HostTensor &kn = transposed ? *transposed : wq;
  int64_t m = x->q.shape[0], n = kn.shape[1];
  if (x->q.shape[1] != kn.shape[0])
    return ctx.error() << "A " << shapeString(x->q.shape) << " and B " << shapeString(wq.shape)
                       << " do not multiply with transB=" << transB;
  if (c) {
    std::vector<int64_t> outShape = {m, n}, check;
    if (!broadcastShapes(c->shape, outShape, check) || check != outShape)
      return ctx.error() << "C " << shapeString(c->shape) << " does not broadcast to " << shapeString(outShape);
  }
  return quantizedProduct(ctx, *x, *w, kn, alpha, c ? &*c : nullptr);
}

FailureOr<OnnxValue> zeroPointProduct(NodeContext &ctx, const OnnxValue &a, const OnnxValue &aZero, const OnnxValue &b,
                                      const OnnxValue &bZero) {
  // A as unsigned bytes, B as signed ones (vpdpbusd's operands), their zero points moved with
  // them, in int32.
  FailureOr<OnnxValue> auOr = asByteType(ctx, a, DType::kUInt8), bsOr = asByteType(ctx, b, DType::kInt8);
  if (failed(auOr) || failed(bsOr))
    return failure();
  const OnnxValue &au = *auOr, &bs = *bsOr;
  FailureOr<OnnxValue> za = zeroPointInt32(ctx, aZero, a.type == DType::kInt8 ? 128 : 0);
  FailureOr<OnnxValue> zb = zeroPointInt32(ctx, bZero, b.type == DType::kUInt8 ? -128 : 0);
  if (failed(za) || failed(zb))
    return failure();
  int64_t K = au.shape.back();
  FailureOr<OnnxValue> acc = matmulValues(ctx, au, bs, DType::kInt32, /*unsignedA=*/true);
  if (failed(acc))
    return failure();
  // sum_k (au - za)(b - zb) = acc - zb * sum_k au - za * sum_k b + K * za * zb; a term whose
  // zero point is 0 is left out, one that is a known scalar is a constant of the epilogue.
  std::optional<int64_t> zaKnown = uniformConstant(*za), zbKnown = uniformConstant(*zb);
  bool rows = zbKnown != 0, cols = zaKnown != 0;
  bool zaScalar = zaKnown && za->numElements() == 1, zbScalar = zbKnown && zb->numElements() == 1;
  std::vector<const OnnxValue *> ins = {&*acc};
  std::optional<OnnxValue> rowSums, colSums;
  if (rows) {
    rowSums = int32Sums(ctx, au, au.rank() - 1);  // [..., M, 1]
    ins.push_back(&*rowSums);
  }
  if (cols) {
    colSums = int32Sums(ctx, bs, bs.rank() - 2);  // [..., 1, N]
    ins.push_back(&*colSums);
  }
  int zaAt = -1, zbAt = -1;  // run-time or per-row/column zero points: inputs of the epilogue
  if (cols && !zaScalar) {
    zaAt = static_cast<int>(ins.size());
    ins.push_back(&*za);
  }
  if (rows && !zbScalar) {
    zbAt = static_cast<int>(ins.size());
    ins.push_back(&*zb);
  }
  int64_t zaValue = zaKnown.value_or(0), zbValue = zbKnown.value_or(0);
  return elementwise(ctx, ins, DType::kInt32, [=](OpBuilder &bld, Location l, ValueRange v) -> Value {
    Type i32 = bld.getI32Type();
    auto constant = [&](int64_t c) {
      // (Products of zero points wrap as the accumulator does: exact while the result fits.)
      int32_t wrapped = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(c)));
      return arith::ConstantOp::create(bld, l, bld.getIntegerAttr(i32, wrapped)).getResult();
    };
    Value zaV = zaAt >= 0 ? v[zaAt] : constant(zaValue), zbV = zbAt >= 0 ? v[zbAt] : constant(zbValue);
    Value sum = v[0];
    unsigned next = 1;
    if (rows)
      sum = arith::SubIOp::create(bld, l, sum, arith::MulIOp::create(bld, l, v[next++], zbV));
    if (cols)
      sum = arith::SubIOp::create(bld, l, sum, arith::MulIOp::create(bld, l, v[next++], zaV));
    if (rows && cols) {
      Value k = zaAt < 0 && zbAt < 0 ? constant(K * zaValue * zbValue)
                                     : arith::MulIOp::create(bld, l, arith::MulIOp::create(bld, l, zaV, zbV),
                                                             constant(K));
      sum = arith::AddIOp::create(bld, l, sum, k);
    }
    return sum;
  });
}

} // namespace hexir::onnx_import

//===- GeneratorOps.cpp - ONNX ops that make tensors from indices ---------===//
//
// EyeLike, the window functions and MelWeightMatrix depend only on shapes, attributes and
// scalars known at compile time: they fold to constants. OneHot compares each output index with the input's index along the new axis.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/FloatBits.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>


using namespace mlir;

namespace hexir::onnx_import {
namespace {

// The element type an op's `dtype`-like attribute names (and its ONNX code), or `fallback`.
FailureOr<DType> typeAttr(NodeContext &ctx, const char *name, DType fallback, int32_t &onnxType) {
  onnxType = 0;
  if (ctx.attr(name) == nullptr)
    return fallback;
  int64_t code = ctx.attrInt(name, 0);
  DType t;
  if (!dtypeFromOnnx(static_cast<int32_t>(code), t))
    return ctx.error() << name << " " << onnxTypeName(static_cast<int32_t>(code)) << " is not supported";
  onnxType = static_cast<int32_t>(code);
  return t;
}

// A float16 result is rounded to that precision (doubles and bfloat16 alike: computed in f32).
LogicalResult setFolded(NodeContext &ctx, HostTensor t, int32_t onnxType = 0) {
  if (!foldable(t.shape))
    return ctx.error() << "its result " << shapeString(t.shape) << " is too large to build at compile time";
  if (onnxType == onnx::TensorProto::FLOAT16 || onnxType == onnx::TensorProto::BFLOAT16)
    for (float &v : t.f)
      v = roundToHalf(v, onnxType == onnx::TensorProto::BFLOAT16);
  OnnxValue v = OnnxValue::ofConstant(std::move(t));
  if (isFloat(v.type) && onnxType != onnx::TensorProto::FLOAT)
    v.onnxType = onnxType;
  ctx.setOutput(0, v);
  return success();
}

// EyeLike: ones on the k-th diagonal of a matrix shaped as the input.
LogicalResult convertEyeLike(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (x.rank() != 2)
    return ctx.error() << "input must have rank 2; it has shape " << shapeString(x.shape);
  int32_t onnxType;
  auto type = typeAttr(ctx, "dtype", x.type, onnxType);
  if (failed(type))
    return failure();
  if (!foldable(x.shape))
    return ctx.error() << "its result " << shapeString(x.shape) << " is too large to build at compile time";
  int64_t k = ctx.attrInt("k", 0), rows = x.shape[0], cols = x.shape[1];
  HostTensor t = HostTensor::zeros(*type, x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = r + k;
    if (c < 0 || c >= cols)
      continue;
    if (isFloat(*type))
      t.f[r * cols + c] = 1.0f;
    else
      t.i[r * cols + c] = 1;
  }
  return setFolded(ctx, std::move(t), onnxType ? onnxType : x.onnxType);
}

// Hann, Hamming and Blackman windows: sum_k a_k cos(2 pi k n / N) for n in [0, size), where N
// is size (periodic) or size - 1 (symmetric).
LogicalResult convertWindow(NodeContext &ctx, std::vector<double> coefficients) {
  auto sizeT = ctx.requireScalar(0, "size");
  if (failed(sizeT))
    return failure();
  int64_t size = sizeT->asInt(0);
  if (size < 0)
    return ctx.error() << "size " << size << " is negative";
  int32_t onnxType;
  auto type = typeAttr(ctx, "output_datatype", DType::kFloat, onnxType);
  if (failed(type))
    return failure();
  if (!foldable({size}))
    return ctx.error() << "size " << size << " is too large to build at compile time";
  bool periodic = ctx.attrInt("periodic", 1) != 0;
  double n = static_cast<double>(periodic ? size : size - 1);
  HostTensor t = HostTensor::zeros(*type, {size});
  for (int64_t i = 0; i < size; ++i) {
    double y = 0.0;
    for (size_t k = 0; k < coefficients.size(); ++k)
      y += coefficients[k] * (n == 0.0 ? 1.0 : std::cos(2.0 * M_PI * static_cast<double>(k * i) / n));
    if (isFloat(*type))
      t.f[i] = static_cast<float>(y);
    else
      t.i[i] = wrapInteger(floatToInt(y), *type);
  }
  return setFolded(ctx, std::move(t), onnxType);
}
LogicalResult convertHannWindow(NodeContext &ctx) { return convertWindow(ctx, {0.5, -0.5}); }
LogicalResult convertHammingWindow(NodeContext &ctx) { return convertWindow(ctx, {25.0 / 46.0, -21.0 / 46.0}); }
LogicalResult convertBlackmanWindow(NodeContext &ctx) { return convertWindow(ctx, {0.42, -0.5, 0.08}); }

// OneHot: out[..., j, ...] (j along `axis`) = on where the index there (negative: from the
// end) equals j, off elsewhere; an index outside [-depth, depth) gives a row of off.
LogicalResult convertOneHot(NodeContext &ctx) {
  const OnnxValue &indices = ctx.input(0);
  auto depthT = ctx.requireScalar(1, "depth");
  if (failed(depthT))
    return failure();
  int64_t depth = isFloat(depthT->type) ? floatToInt(depthT->asDouble(0)) : depthT->asInt(0);
  if (depth < 1)
    return ctx.error() << "depth " << depth << " must be at least 1";
  const OnnxValue &values = ctx.input(2);
  if (values.numElements() != 2)
    return ctx.error() << "values must hold two elements (off, on); it has shape " << shapeString(values.shape);
  int64_t rank = indices.rank() + 1;
  auto axisOr = ctx.axisAttr("axis", -1, rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  std::vector<int64_t> shape = indices.shape;
  shape.insert(shape.begin() + axis, depth);
  OpBuilder &b = ctx.b;
  Value idx = materialize(ctx, indices);
  Value vals = values.isConstant() ? Value() : reshapeView(b, ctx.loc, materialize(ctx, values), {2});
  bool floatIndices = isFloat(indices.type);
  Value out = generate(ctx, shape, values.type, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
    SmallVector<Value> coords;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        coords.push_back(at[d]);
    Value raw = tensor::ExtractOp::create(nb, nl, idx, coords);
    Value i = floatIndices ? arith::FPToSIOp::create(nb, nl, nb.getI64Type(), raw).getResult()
                           : widenInt(nb, nl, raw, nb.getI64Type(), false);
    Value depthV = arith::ConstantIntOp::create(nb, nl, depth, 64);
    Value zero = arith::ConstantIntOp::create(nb, nl, 0, 64);
    Value negative = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, zero);
    i = arith::SelectOp::create(nb, nl, negative, arith::AddIOp::create(nb, nl, i, depthV), i);
    Value j = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), at[axis]);
    Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, i, j);
    Value on, off;
    if (values.isConstant()) {
      off = elementConstant(nb, nl, values.type, *values.constant, 0);
      on = elementConstant(nb, nl, values.type, *values.constant, 1);
    } else {
      off = tensor::ExtractOp::create(nb, nl, vals, ValueRange{arith::ConstantIndexOp::create(nb, nl, 0)});
      on = tensor::ExtractOp::create(nb, nl, vals, ValueRange{arith::ConstantIndexOp::create(nb, nl, 1)});
    }
    return arith::SelectOp::create(nb, nl, hit, on, off);
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, values.type));
  return success();
}

// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters between mel-spaced
// bin edges, folded at import exactly as ONNX's reference computes them (the edges in double,
// truncated to bins).
LogicalResult convertMelWeightMatrix(NodeContext &ctx) {
  auto bins = ctx.requireScalar(0, "num_mel_bins"), dft = ctx.requireScalar(1, "dft_length"),
       rate = ctx.requireScalar(2, "sample_rate"), lower = ctx.requireScalar(3, "lower_edge_hertz"),
       upper = ctx.requireScalar(4, "upper_edge_hertz");
  if (failed(bins) || failed(dft) || failed(rate) || failed(lower) || failed(upper))
    return failure();
  int64_t melBins = bins->asInt(0), length = dft->asInt(0), sampleRate = rate->asInt(0);
  double low = lower->asDouble(0), high = upper->asDouble(0);
  int64_t spectrogramBins = length / 2 + 1;
  if (melBins < 1 || length < 1 || sampleRate < 1 || !(low >= 0) || !(high > low) ||
      melBins * spectrogramBins > kMaxFoldedElements)
    return ctx.error() << "needs num_mel_bins, dft_length and sample_rate positive, 0 <= lower_edge_hertz < "
                          "upper_edge_hertz, and at most "
                       << kMaxFoldedElements << " weights";
  int32_t onnxType;
  auto dtype = typeAttr(ctx, "output_datatype", DType::kFloat, onnxType);
  if (failed(dtype))
    return failure();
  double lowMel = 2595.0 * std::log10(1.0 + low / 700.0), highMel = 2595.0 * std::log10(1.0 + high / 700.0);
  double melStep = (highMel - lowMel) / static_cast<double>(melBins + 2);
  std::vector<int64_t> edges(melBins + 2);
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * melStep + lowMel) / 2595.0) - 1.0);
    edges[i] = static_cast<int64_t>(std::floor(static_cast<double>(length + 1) * hz / static_cast<double>(sampleRate)));
  }
  HostTensor out = HostTensor::zeros(*dtype, {spectrogramBins, melBins});
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row < 0 || row >= spectrogramBins)
      return;
    if (isFloat(*dtype))
      out.f[row * melBins + col] = static_cast<float>(v);
    else
      out.i[row * melBins + col] = static_cast<int64_t>(v);
  };
  for (int64_t i = 0; i < melBins; ++i) {
    int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (center == left)
      set(center, i, 1.0);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return setFolded(ctx, std::move(out), onnxType);
}


} // namespace

void addGeneratorOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"BlackmanWindow", 17, 21, convertBlackmanWindow, "size known at compile time", "output_datatype periodic", 1},
      {"EyeLike", 13, 21, convertEyeLike, "", "dtype k", 1, nullptr, true},
      {"HammingWindow", 17, 21, convertHammingWindow, "size known at compile time", "output_datatype periodic", 1},
      {"HannWindow", 17, 21, convertHannWindow, "size known at compile time", "output_datatype periodic", 1},
      {"MelWeightMatrix", 17, 21, convertMelWeightMatrix, "folded: its inputs known at compile time", "output_datatype",
       1},
      {"OneHot", 13, 21, convertOneHot, "depth known at compile time", "axis", 3},
  });
}

} // namespace hexir::onnx_import

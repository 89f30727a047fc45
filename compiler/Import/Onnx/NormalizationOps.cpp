//===- NormalizationOps.cpp - ONNX normalizations, softmax, reductions ----===//
//
// Each is a short chain of reductions (linalg.generic with reduction loops, kept dims as
// views) and elementwise ops. BatchNormalization with constant statistics folds to one
// multiply-add per element.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

LogicalResult setElementwise(NodeContext &ctx, size_t index, ArrayRef<const OnnxValue *> inputs,
                             const ScalarBody &body) {
  auto r = elementwise(ctx, inputs, DType::kFloat, body);
  if (failed(r))
    return failure();
  ctx.setOutput(index, *r);
  return success();
}

// `v` (1-D, one value per channel) shaped to broadcast over NCHW-like `rank`.
OnnxValue perChannel(NodeContext &ctx, const OnnxValue &v, int64_t rank) {
  std::vector<int64_t> shape = {v.numElements()};
  shape.resize(std::max<int64_t>(rank - 1, 1), 1);
  return reshaped(ctx, v, shape);
}

LogicalResult convertBatchNormalization(NodeContext &ctx) {
  if (ctx.attrInt("training_mode", 0) != 0)
    return ctx.error() << "training_mode=1 is not supported; Hexir compiles inference graphs";
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      return ctx.error() << "the running mean/var outputs (training) are not supported";
  const OnnxValue &x = ctx.input(0);
  if (x.rank() < 2 || !isFloat(x.type))
    return ctx.error() << "input must be a float tensor of rank 2 or more";
  if (failed(ctx.requireFloatInputs({1, 2, 3, 4})))
    return failure();
  int64_t c = x.shape[1];
  for (size_t i = 1; i < 5; ++i)
    if (!ctx.hasInput(i) || ctx.input(i).numElements() != c)
      return ctx.error() << "input " << i << " must hold " << c << " values (one per channel)";
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  bool constant = true;
  for (size_t i = 1; i < 5; ++i)
    constant &= ctx.input(i).isConstant();
  if (constant) {
    const HostTensor &scale = *ctx.input(1).constant, &bias = *ctx.input(2).constant,
                     &mean = *ctx.input(3).constant, &var = *ctx.input(4).constant;
    HostTensor s = HostTensor::zeros(DType::kFloat, {c}), t = HostTensor::zeros(DType::kFloat, {c});
    for (int64_t k = 0; k < c; ++k) {
      double sk = scale.asDouble(k) / std::sqrt(var.asDouble(k) + eps);
      s.f[k] = static_cast<float>(sk);
      t.f[k] = static_cast<float>(bias.asDouble(k) - mean.asDouble(k) * sk);
    }
    OnnxValue sv = perChannel(ctx, OnnxValue::ofConstant(std::move(s)), x.rank());
    OnnxValue tv = perChannel(ctx, OnnxValue::ofConstant(std::move(t)), x.rank());
    return setElementwise(ctx, 0, {&x, &sv, &tv}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
    });
  }
  OnnxValue scale = perChannel(ctx, ctx.input(1), x.rank()), bias = perChannel(ctx, ctx.input(2), x.rank()),
            mean = perChannel(ctx, ctx.input(3), x.rank()), var = perChannel(ctx, ctx.input(4), x.rank());
  return setElementwise(ctx, 0, {&x, &scale, &bias, &mean, &var}, [eps](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value d = arith::SubFOp::create(b, l, a[0], a[3]);
    Value sd = math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, a[4], floatConst(b, l, eps)));
    Value y = arith::MulFOp::create(b, l, arith::DivFOp::create(b, l, d, sd), a[1]);
    return arith::AddFOp::create(b, l, y, a[2]);
  });
}

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  if (failed(ctx.requireFloatInputs({1, 2})))
    return failure();
  auto axisOr = ctx.axisAttr("axis", -1, x.rank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t d = axis; d < x.rank(); ++d) {
    axes.push_back(d);
    count *= x.shape[d];
  }
  double inv = 1.0 / static_cast<double>(count);
  Value xv = materialize(ctx, x);
  OnnxValue sum = OnnxValue::ofValue(reduce(ctx, xv, axes, ReduceKind::kSum), DType::kFloat);
  auto centered = elementwise(ctx, {&x, &sum}, DType::kFloat, [inv](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value mean = arith::MulFOp::create(b, l, a[1], floatConst(b, l, inv));
    return arith::SubFOp::create(b, l, a[0], mean);
  });
  if (failed(centered))
    return failure();
  OnnxValue sq = OnnxValue::ofValue(reduce(ctx, centered->value, axes, ReduceKind::kSumSquares), DType::kFloat);
  // The optional Mean and InvStdDev outputs: shape [d0, ..., d(axis-1), 1, ..., 1].
  if (ctx.hasOutput(1) && failed(setElementwise(ctx, 1, {&sum}, [inv](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MulFOp::create(b, l, a[0], floatConst(b, l, inv));
      })))
    return failure();
  if (ctx.hasOutput(2) && failed(setElementwise(ctx, 2, {&sq}, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value var = arith::MulFOp::create(b, l, a[0], floatConst(b, l, inv));
        Value sd = math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, var, floatConst(b, l, eps)));
        return arith::DivFOp::create(b, l, floatConst(b, l, 1.0), sd);
      })))
    return failure();
  std::vector<const OnnxValue *> inputs = {&*centered, &sq};
  bool hasScale = ctx.hasInput(1), hasBias = ctx.hasInput(2);
  if (hasScale)
    inputs.push_back(&ctx.input(1));
  if (hasBias)
    inputs.push_back(&ctx.input(2));
  return setElementwise(ctx, 0, inputs, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value var = arith::MulFOp::create(b, l, a[1], floatConst(b, l, inv));
    Value sd = math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, var, floatConst(b, l, eps)));
    Value y = arith::DivFOp::create(b, l, a[0], sd);
    if (hasScale)
      y = arith::MulFOp::create(b, l, y, a[2]);
    if (hasBias)
      y = arith::AddFOp::create(b, l, y, a[hasScale ? 3 : 2]);
    return y;
  });
}

} // namespace

FailureOr<OnnxValue> softmax(NodeContext &ctx, const OnnxValue &x, int64_t axis, bool log) {
  Value xv = materialize(ctx, x);
  OnnxValue max = OnnxValue::ofValue(reduce(ctx, xv, {axis}, ReduceKind::kMax), DType::kFloat);
  auto shifted = elementwise(ctx, {&x, &max}, DType::kFloat, [log](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value d = arith::SubFOp::create(b, l, a[0], a[1]);
    return log ? d : math::ExpOp::create(b, l, d).getResult();
  });
  if (failed(shifted))
    return failure();
  Value toSum = shifted->value;
  if (log) {
    auto e = elementwise(ctx, {&*shifted}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::ExpOp::create(b, l, a[0]);
    });
    if (failed(e))
      return failure();
    toSum = e->value;
  }
  OnnxValue sum = OnnxValue::ofValue(reduce(ctx, toSum, {axis}, ReduceKind::kSum), DType::kFloat);
  return elementwise(ctx, {&*shifted, &sum}, DType::kFloat, [log](OpBuilder &b, Location l, ValueRange a) -> Value {
    if (log)
      return arith::SubFOp::create(b, l, a[0], math::LogOp::create(b, l, a[1]));
    return arith::DivFOp::create(b, l, a[0], a[1]);
  });
}

namespace {

// (x - mean) / (sqrt(var) + eps) or / sqrt(var + eps) over `axes` (sorted), the statistics of
// float `x` kept as size-1 dims: InstanceNormalization and MeanVarianceNormalization.
FailureOr<OnnxValue> standardize(NodeContext &ctx, const OnnxValue &x, ArrayRef<int64_t> axes, double eps,
                                 bool epsOutsideSqrt) {
  int64_t count = 1;
  for (int64_t a : axes)
    count *= x.shape[a];
  double inv = count == 0 ? 0.0 : 1.0 / static_cast<double>(count);
  OnnxValue sum = OnnxValue::ofValue(reduce(ctx, materialize(ctx, x), axes, ReduceKind::kSum), DType::kFloat);
  auto centered = elementwise(ctx, {&x, &sum}, DType::kFloat, [inv](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], arith::MulFOp::create(b, l, a[1], floatConst(b, l, inv)));
  });
  if (failed(centered))
    return failure();
  OnnxValue sq = OnnxValue::ofValue(reduce(ctx, centered->value, axes, ReduceKind::kSumSquares), DType::kFloat);
  return elementwise(ctx, {&*centered, &sq}, DType::kFloat, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value var = arith::MulFOp::create(b, l, a[1], floatConst(b, l, inv));
    Value sd = epsOutsideSqrt
                   ? arith::AddFOp::create(b, l, math::SqrtOp::create(b, l, var), floatConst(b, l, eps)).getResult()
                   : math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, var, floatConst(b, l, eps))).getResult();
    return arith::DivFOp::create(b, l, a[0], sd);
  });
}

// InstanceNormalization: each (n, c) plane standardized, then scaled and shifted per channel.
LogicalResult convertInstanceNormalization(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (x.rank() < 3 || !isFloat(x.type))
    return ctx.error() << "input must be a float tensor of rank 3 or more ([N, C, d1, ...])";
  if (failed(ctx.requireFloatInputs({1, 2})))
    return failure();
  int64_t c = x.shape[1];
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).numElements() != c)
      return ctx.error() << "input " << i << " must hold " << c << " values (one per channel)";
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < x.rank(); ++d)
    axes.push_back(d);
  auto y = standardize(ctx, x, axes, ctx.attrFloat("epsilon", 1e-5f), /*epsOutsideSqrt=*/false);
  if (failed(y))
    return failure();
  OnnxValue scale = perChannel(ctx, ctx.input(1), x.rank()), bias = perChannel(ctx, ctx.input(2), x.rank());
  return setElementwise(ctx, 0, {&*y, &scale, &bias}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
  });
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default N, H, W).
LogicalResult convertMeanVarianceNormalization(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  std::vector<int64_t> axes = ctx.attr("axes") ? ctx.attrInts("axes") : std::vector<int64_t>{0, 2, 3};
  for (int64_t &a : axes)
    if (!normalizeAxis(a, x.rank()))
      return ctx.error() << "axis " << a << " is out of range for rank " << x.rank();
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto y = standardize(ctx, x, axes, 1e-9, /*epsOutsideSqrt=*/true);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

// LRN: x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta; the sum
// is a window over the squares padded along C (a reduction loop of extent `size`).
LogicalResult convertLRN(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (x.rank() < 3 || !isFloat(x.type))
    return ctx.error() << "input must be a float tensor of rank 3 or more ([N, C, d1, ...])";
  int64_t size = ctx.attrInt("size", 0);
  if (size < 1 || size > 2 * x.shape[1] + 1)
    return ctx.error() << "size " << size << " must be in [1, " << 2 * x.shape[1] + 1
                       << "] (a window over at most every channel)";
  double alpha = ctx.attrFloat("alpha", 1e-4f), beta = ctx.attrFloat("beta", 0.75f), bias = ctx.attrFloat("bias", 1.0f);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  auto squares = elementwise(ctx, {&x}, DType::kFloat, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(nb, l, a[0], a[0]);
  });
  if (failed(squares))
    return failure();
  int64_t rank = x.rank(), before = (size - 1) / 2, after = size - 1 - before;
  SmallVector<int64_t> low(rank, 0), high(rank, 0), padded(x.shape.begin(), x.shape.end());
  low[1] = before;
  high[1] = after;
  padded[1] += size - 1;
  Value zero = floatConst(b, loc, 0.0);
  Value pad = tensor::PadOp::create(b, loc, RankedTensorType::get(padded, b.getF32Type()), squares->value,
                                    getAsIndexOpFoldResult(mc, low), getAsIndexOpFoldResult(mc, high), zero);
  // Loops: the output's dims, then the window k: read padded[n, c + k, ...].
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < rank; ++d) {
    in.push_back(d == 1 ? getAffineDimExpr(1, mc) + getAffineDimExpr(rank, mc) : getAffineDimExpr(d, mc));
    out.push_back(getAffineDimExpr(d, mc));
  }
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  // The window's extent comes from a (never read) operand of shape [size].
  Value window = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, b.getF32Type());
  Value init = linalg::FillOp::create(b, loc, ValueRange{zero},
                                      ValueRange{tensor::EmptyOp::create(b, loc, x.shape, b.getF32Type())})
                   .getResult(0);
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, in, mc),
                                 AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, mc)}, mc),
                                 AffineMap::get(rank + 1, 0, out, mc)};
  auto sum = linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, ValueRange{pad, window}, ValueRange{init},
                                       maps, iterators, [](OpBuilder &nb, Location l, ValueRange a) {
                                         linalg::YieldOp::create(nb, l, ValueRange{arith::AddFOp::create(nb, l, a[2], a[0])});
                                       });
  OnnxValue sums = OnnxValue::ofValue(sum.getResult(0), DType::kFloat);
  double scale = alpha / static_cast<double>(size);
  return setElementwise(ctx, 0, {&x, &sums}, [=](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value base = arith::AddFOp::create(nb, l, floatConst(nb, l, bias),
                                       arith::MulFOp::create(nb, l, floatConst(nb, l, scale), a[1]));
    // base > 0 (bias > 0 in practice): base^beta as exp(beta log base), as Pow's kernels compute it.
    Value power = math::ExpOp::create(nb, l, arith::MulFOp::create(nb, l, floatConst(nb, l, beta),
                                                                    math::LogOp::create(nb, l, base)));
    return arith::DivFOp::create(nb, l, a[0], power);
  });
}

LogicalResult convertSoftmaxLike(NodeContext &ctx, bool log) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  auto axisOr = ctx.axisAttr("axis", -1, x.rank());
  if (failed(axisOr))
    return failure();
  auto r = softmax(ctx, x, *axisOr, log);
  if (failed(r))
    return failure();
  ctx.setOutput(0, *r);
  return success();
}
LogicalResult convertSoftmax(NodeContext &ctx) { return convertSoftmaxLike(ctx, false); }
LogicalResult convertLogSoftmax(NodeContext &ctx) { return convertSoftmaxLike(ctx, true); }

// LogSumExp's shift: the max, or 0 where the max is -inf (so exp(x - shift) is 0, not NaN).
Value finiteShift(OpBuilder &b, Location l, Value max) {
  Value finite = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, max,
                                       floatConst(b, l, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, l, finite, max, floatConst(b, l, 0.0));
}

// What a reduction computes around its reduce(): Mean divides by the count; the composites
// transform the elements first (|x|, exp(x - max)) and the result after (sqrt, log).
enum class ReduceForm { kPlain, kMean, kL1, kL2, kLogSum, kLogSumExp };

LogicalResult convertReduce(NodeContext &ctx, ReduceKind kind, ReduceForm form = ReduceForm::kPlain) {
  const OnnxValue &x = ctx.input(0);
  std::vector<int64_t> axes;
  // ReduceSum takes its axes as an input from opset 13, the others from opset 18.
  bool axesFromInput = ctx.node().op_type() == "ReduceSum" || ctx.opset() >= 18;
  if (axesFromInput && ctx.attr("axes") != nullptr)
    return ctx.error() << "axes is an input in opset " << ctx.opset() << ", not an attribute";
  if (axesFromInput && ctx.hasInput(1)) {
    auto t = ctx.requireConstant(1, "axes");
    if (failed(t))
      return failure();
    axes = t->ints();
  } else if (!axesFromInput) {
    axes = ctx.attrInts("axes");
  }
  if (axes.empty()) {
    if (ctx.attrInt("noop_with_empty_axes", 0) != 0) {
      ctx.setOutput(0, x);
      return success();
    }
    for (int64_t d = 0; d < x.rank(); ++d)
      axes.push_back(d);
  }
  for (int64_t &a : axes)
    if (!normalizeAxis(a, x.rank()))
      return ctx.error() << "axis " << a << " is out of range for rank " << x.rank();
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (form != ReduceForm::kPlain && !isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  int64_t count = 1;
  for (int64_t a : axes)
    count *= x.shape[a];
  Value source = materialize(ctx, x);
  OnnxValue shift = x;  // LogSumExp: the max along the axes, subtracted before exp
  if (form == ReduceForm::kL1 || form == ReduceForm::kLogSumExp) {
    std::vector<const OnnxValue *> in = {&x};
    if (form == ReduceForm::kLogSumExp) {
      shift = OnnxValue::ofValue(reduce(ctx, source, axes, ReduceKind::kMax), x.type);
      in.push_back(&shift);
    }
    auto pre = elementwise(ctx, in, x.type, [form](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (form == ReduceForm::kL1)
        return math::AbsFOp::create(b, l, a[0]);
      // exp(x - max); a max of -inf (every element -inf) subtracts 0, giving log(0) = -inf.
      return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], finiteShift(b, l, a[1])));
    });
    if (failed(pre))
      return failure();
    source = pre->value;
  }
  Value r = reduce(ctx, source, axes, kind);
  if (form != ReduceForm::kPlain && form != ReduceForm::kL1) {
    OnnxValue reduced = OnnxValue::ofValue(r, DType::kFloat);
    std::vector<const OnnxValue *> in = {&reduced};
    if (form == ReduceForm::kLogSumExp)
      in.push_back(&shift);
    double n = static_cast<double>(count);
    auto post = elementwise(ctx, in, DType::kFloat, [form, n](OpBuilder &b, Location l, ValueRange a) -> Value {
      switch (form) {
      case ReduceForm::kMean:
        return arith::DivFOp::create(b, l, a[0], floatConst(b, l, n));
      case ReduceForm::kL2:
        return math::SqrtOp::create(b, l, a[0]);
      case ReduceForm::kLogSum:
        return math::LogOp::create(b, l, a[0]);
      default:
        return arith::AddFOp::create(b, l, finiteShift(b, l, a[1]), math::LogOp::create(b, l, a[0]));
      }
    });
    if (failed(post))
      return failure();
    r = post->value;
  }
  if (ctx.attrInt("keepdims", 1) == 0) {
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!llvm::is_contained(axes, d))
        shape.push_back(x.shape[d]);
    r = reshapeView(ctx.b, ctx.loc, r, shape);
  }
  ctx.setOutput(0, OnnxValue::ofValue(r, x.type));
  return success();
}
// ArgMax/ArgMin in two reductions: the extreme value along the axis, then the first (or last)
// index holding it. A NaN counts as the extreme, as NumPy's argmax/argmin have it: the max and
// min reductions propagate it, and the index pass takes the first NaN. This is the index of the
// first (or last) extreme of `x` along `axis` (not empty), as int64 without that axis.
Value argExtremeIndex(NodeContext &ctx, const OnnxValue &x, const int64_t *axis, bool isMax, bool last) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  Value v = materialize(ctx, x);
  Value extreme = reduce(ctx, v, {*axis}, isMax ? ReduceKind::kMax : ReduceKind::kMin);
  int64_t rank = x.rank(), n = x.shape[*axis];
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d == *axis ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (d != *axis) {
      outShape.push_back(x.shape[d]);
      outExprs.push_back(getAffineDimExpr(d, mc));
    }
  }
  Type i64 = b.getI64Type();
  Value none = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(last ? -1 : n));
  Value empty = tensor::EmptyOp::create(b, loc, outShape, i64);
  Value init = linalg::FillOp::create(b, loc, ValueRange{none}, ValueRange{empty}).getResult(0);
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, mc);
  // The extreme keeps the axis as size 1 (reduce()): read at 0 there.
  SmallVector<AffineExpr> keptExprs;
  for (int64_t d = 0; d < rank; ++d)
    keptExprs.push_back(d == *axis ? getAffineConstantExpr(0, mc) : getAffineDimExpr(d, mc));
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, mc), AffineMap::get(rank, 0, keptExprs, mc),
                                 outMap};
  bool isF = isFloat(x.type);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{v, extreme}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value index = arith::IndexCastOp::create(nb, nl, i64, linalg::IndexOp::create(nb, nl, *axis));
        Value hit;
        if (isF) {
          Value equal = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0], a[1]);
          Value nan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, a[0], a[0]);
          hit = arith::OrIOp::create(nb, nl, equal, nan);
        } else {
          hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[0], a[1]);
        }
        Value better = last ? arith::MaxSIOp::create(nb, nl, a[2], index).getResult()
                            : arith::MinSIOp::create(nb, nl, a[2], index).getResult();
        linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, hit, better, a[2])});
      });
  return generic.getResult(0);
}

LogicalResult convertArgExtreme(NodeContext &ctx, bool isMax) {
  const OnnxValue &x = ctx.input(0);
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 0, x.rank());
  if (failed(axis))
    return failure();
  if (x.shape[*axis] == 0)
    return ctx.error() << "cannot take the arg" << (isMax ? "max" : "min") << " of an empty axis";
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value r = argExtremeIndex(ctx, x, &*axis, isMax, ctx.attrInt("select_last_index", 0) != 0);
  if (ctx.attrInt("keepdims", 1) != 0) {
    std::vector<int64_t> kept(x.shape);
    kept[*axis] = 1;
    r = reshapeView(b, loc, r, kept);
  }
  ctx.setOutput(0, OnnxValue::ofValue(r, DType::kInt64));
  return success();
}
// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
LogicalResult convertHardmax(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  FailureOr<int64_t> axis = ctx.axisAttr("axis", -1, x.rank());
  if (failed(axis))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  if (x.numElements() == 0) {
    ctx.setOutput(0, x);
    return success();
  }
  Value index = argExtremeIndex(ctx, x, &*axis, /*isMax=*/true, /*last=*/false);
  int64_t rank = x.rank();
  SmallVector<AffineExpr> dropped;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      dropped.push_back(getAffineDimExpr(d, mc));
  Type et = elementType(mc, x.type);
  Value empty = tensor::EmptyOp::create(b, loc, x.shape, et);
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, dropped, mc), AffineMap::getMultiDimIdentityMap(rank, mc)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  int64_t a = *axis;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, ValueRange{index}, ValueRange{empty}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value here = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, a));
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, here, args[0]);
        linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, hit, floatConst(nb, nl, 1.0),
                                                                           floatConst(nb, nl, 0.0))});
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), x.type));
  return success();
}

// TopK by ranks: each element's rank along the axis is the number of elements that come before
// it (larger, or smaller with largest=0; an equal one at a lower index first, so ties keep their
// order as ONNX asks), a reduction over the axis; output position r then takes the element of
// rank r, a second reduction. O(n^2 + n k) along the axis; the outputs are always sorted.
LogicalResult convertTopK(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (x.type == DType::kBool || isUnsigned(x.type))
    return ctx.error() << "input must be a float or signed integer tensor";
  auto kT = ctx.requireScalar(1, "k");
  if (failed(kT))
    return failure();
  FailureOr<int64_t> axis = ctx.axisAttr("axis", -1, x.rank());
  if (failed(axis))
    return failure();
  int64_t k = kT->asInt(0), a = *axis, n = x.shape[a], rank = x.rank();
  if (k < 0 || k > n)
    return ctx.error() << "k " << k << " must be in [0, " << n << "] (the axis' size)";
  bool largest = ctx.attrInt("largest", 1) != 0;
  std::vector<int64_t> outShape = x.shape;
  outShape[a] = k;
  if (elementCount(outShape) == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(x.type, outShape)));
    if (ctx.hasOutput(1))
      ctx.setOutput(1, OnnxValue::ofConstant(HostTensor::zeros(DType::kInt64, outShape)));
    return success();
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  Value xv = materialize(ctx, x);
  bool isF = isFloat(x.type);
  Type i64 = b.getI64Type();
  // A generic over init's shape with a reduction loop of extent n (the axis) after its dims.
  auto reduceAlong = [&](Value init, auto body) {
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, mc));
    Value span = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n}, b.getI8Type());
    SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, mc)}, mc),
                                   AffineMap::get(rank + 1, 0, outExprs, mc)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, ValueRange{span}, ValueRange{init}, maps,
                                     iterators, body)
        .getResult(0);
  };
  auto zeros = [&](ArrayRef<int64_t> shape, int64_t v) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, i64);
    return linalg::FillOp::create(b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, v, 64).getResult()},
                                  ValueRange{empty})
        .getResult(0);
  };
  // rank[i] = #{j : x[j] before x[i]}.
  Value ranks = reduceAlong(zeros(x.shape, 0), [&](OpBuilder &nb, Location nl, ValueRange args) {
    SmallVector<Value> at, other;
    for (int64_t d = 0; d < rank; ++d)
      at.push_back(linalg::IndexOp::create(nb, nl, d));
    other = at;
    Value j = linalg::IndexOp::create(nb, nl, rank);
    other[a] = j;
    Value xi = tensor::ExtractOp::create(nb, nl, xv, at), xj = tensor::ExtractOp::create(nb, nl, xv, other);
    Value beats = isF ? arith::CmpFOp::create(nb, nl, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, xj, xi)
                            .getResult()
                      : arith::CmpIOp::create(nb, nl, largest ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, xj, xi)
                            .getResult();
    Value equal = isF ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, xj, xi).getResult()
                      : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, xj, xi).getResult();
    Value earlier = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, j, at[a]);
    Value before = arith::OrIOp::create(nb, nl, beats, arith::AndIOp::create(nb, nl, equal, earlier));
    Value one = arith::ExtUIOp::create(nb, nl, i64, before);
    linalg::YieldOp::create(nb, nl, ValueRange{arith::AddIOp::create(nb, nl, args[1], one)});
  });
  // index[r] = the i whose rank is r.
  Value indices = reduceAlong(zeros(outShape, 0), [&](OpBuilder &nb, Location nl, ValueRange args) {
    SmallVector<Value> at;
    for (int64_t d = 0; d < rank; ++d)
      at.push_back(linalg::IndexOp::create(nb, nl, d));
    Value i = linalg::IndexOp::create(nb, nl, rank);
    Value r = arith::IndexCastOp::create(nb, nl, i64, at[a]);
    at[a] = i;
    Value ri = tensor::ExtractOp::create(nb, nl, ranks, at);
    Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, ri, r);
    linalg::YieldOp::create(
        nb, nl, ValueRange{arith::SelectOp::create(nb, nl, hit, arith::IndexCastOp::create(nb, nl, i64, i), args[1])});
  });
  Value values = generate(ctx, outShape, x.type, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
    Value i = tensor::ExtractOp::create(nb, nl, indices, at);
    SmallVector<Value> coords(at.begin(), at.end());
    coords[a] = arith::MinUIOp::create(nb, nl, arith::IndexCastOp::create(nb, nl, nb.getIndexType(), i),
                                       arith::ConstantIndexOp::create(nb, nl, n - 1));
    return tensor::ExtractOp::create(nb, nl, xv, coords);
  });
  ctx.setOutput(0, OnnxValue::ofValue(values, x.type));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, OnnxValue::ofValue(indices, DType::kInt64));
  return success();
}

// LpNormalization: x divided by its L1 or L2 norm along the axis.
LogicalResult convertLpNormalization(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type))
    return ctx.error() << "input must be a float tensor";
  auto axis = ctx.axisAttr("axis", -1, x.rank());
  if (failed(axis))
    return failure();
  int64_t p = ctx.attrInt("p", 2);
  if (p != 1 && p != 2)
    return ctx.error() << "p " << p << " is not 1 or 2";
  Value source = materialize(ctx, x);
  if (p == 1) {
    auto abs = elementwise(ctx, {&x}, DType::kFloat, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::AbsFOp::create(b, l, a[0]);
    });
    if (failed(abs))
      return failure();
    source = abs->value;
  }
  OnnxValue norm = OnnxValue::ofValue(reduce(ctx, source, {*axis}, p == 1 ? ReduceKind::kSum : ReduceKind::kSumSquares),
                                      DType::kFloat);
  return setElementwise(ctx, 0, {&x, &norm}, [p](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value n = p == 1 ? a[1] : math::SqrtOp::create(b, l, a[1]).getResult();
    return arith::DivFOp::create(b, l, a[0], n);
  });
}

LogicalResult convertArgMax(NodeContext &ctx) { return convertArgExtreme(ctx, true); }
LogicalResult convertArgMin(NodeContext &ctx) { return convertArgExtreme(ctx, false); }

LogicalResult convertReduceMean(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSum, ReduceForm::kMean); }
LogicalResult convertReduceSum(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSum); }
LogicalResult convertReduceMax(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kMax); }
LogicalResult convertReduceMin(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kMin); }
LogicalResult convertReduceProd(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kProd); }
LogicalResult convertReduceSumSquare(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSumSquares); }
LogicalResult convertReduceL1(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSum, ReduceForm::kL1); }
LogicalResult convertReduceL2(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSumSquares, ReduceForm::kL2); }
LogicalResult convertReduceLogSum(NodeContext &ctx) { return convertReduce(ctx, ReduceKind::kSum, ReduceForm::kLogSum); }
LogicalResult convertReduceLogSumExp(NodeContext &ctx) {
  return convertReduce(ctx, ReduceKind::kSum, ReduceForm::kLogSumExp);
}

} // namespace

void addNormalizationOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"ArgMax", 13, 21, convertArgMax, "", "axis keepdims select_last_index", 1},
      {"ArgMin", 13, 21, convertArgMin, "", "axis keepdims select_last_index", 1},
      {"BatchNormalization", 13, 21, convertBatchNormalization, "inference (training_mode=0)", "epsilon momentum training_mode", 5},
      {"Hardmax", 13, 21, convertHardmax, "", "axis", 1},
      {"InstanceNormalization", 13, 21, convertInstanceNormalization, "", "epsilon", 3},
      {"LpNormalization", 13, 21, convertLpNormalization, "p 1 or 2", "axis p", 1},
      {"LRN", 13, 21, convertLRN, "", "alpha beta bias size", 1},
      {"MeanVarianceNormalization", 13, 21, convertMeanVarianceNormalization, "", "axes", 1},
      {"LayerNormalization", 17, 21, convertLayerNormalization, "", "axis epsilon stash_type", 1},
      {"LogSoftmax", 13, 21, convertLogSoftmax, "", "axis", 1},
      {"ReduceL1", 13, 21, convertReduceL1, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceL2", 13, 21, convertReduceL2, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceLogSum", 13, 21, convertReduceLogSum, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceLogSumExp", 13, 21, convertReduceLogSumExp, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceMax", 13, 21, convertReduceMax, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceMean", 13, 21, convertReduceMean, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceMin", 13, 21, convertReduceMin, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceSum", 13, 21, convertReduceSum, "axes known at compile time", "keepdims noop_with_empty_axes", 1},
      {"ReduceSumSquare", 13, 21, convertReduceSumSquare, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"ReduceProd", 13, 21, convertReduceProd, "axes known at compile time", "axes keepdims noop_with_empty_axes", 1},
      {"TopK", 13, 21, convertTopK, "k known at compile time; O(n^2) along the axis", "axis largest sorted", 2},
      {"Softmax", 13, 21, convertSoftmax, "", "axis", 1},
  });
}

} // namespace hexir::onnx_import

//===- ResizeOps.cpp - ONNX Resize (and Upsample), GridSample -------------===//
//
// Shapes, scales and the region of interest are known at compile time, so where each output
// element reads from is too: per resized axis the importer computes, in double as ONNX's
// reference does, each output coordinate's taps (input indices and weights: 1 for nearest, 2
// for linear, 4 for cubic). Each axis is then one linalg.generic over the output with a
// reduction loop over the taps, reading the input with tensor.extract at the tap's index (the
// tables are constants [O, T]): separable, O*T reads per row instead of a dense O x I matrix.
// GridSample reads where a run-time grid says: its taps are computed in the kernel body, as
// PyTorch's grid_sample computes them (which ONNX's operator follows).
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

struct ResizeAttrs {
  std::string mode, transform, nearest;
  double cubicA = -0.75, extrapolation = 0.0;
  bool excludeOutside = false;
};

// The taps of one axis: for output o, `indices[o*T + t]` (in [0, I)) and `weights[o*T + t]`;
// `outside[o]`: tf_crop_and_resize's coordinate fell outside the input (the output is the
// extrapolation value).
struct AxisTaps {
  int64_t taps = 0;
  std::vector<int64_t> indices;
  std::vector<double> weights;
  std::vector<bool> outside;
  bool identity = false;
};

// The `n` integers of [0, limit) nearest to x, ties to the smaller, in ascending order.
std::vector<int64_t> nearestIndices(double x, int64_t n, int64_t limit) {
  // Beyond either end (or NaN, from a NaN roi) the nearest indices are the end's: keep x where
  // its floor converts to int64.
  if (!(x > -2.0))
    x = -2.0;
  if (!(x < static_cast<double>(limit) + 2.0))
    x = static_cast<double>(limit) + 2.0;
  int64_t lo = 0, hi = limit;
  if (limit > 4 * n + 4) {
    lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(x)) - n - 1, 0, limit - (2 * n + 3));
    hi = lo + 2 * n + 3;
  }
  std::vector<int64_t> c;
  for (int64_t i = lo; i < hi; ++i)
    c.push_back(i);
  std::stable_sort(c.begin(), c.end(), [x](int64_t a, int64_t b) {
    double da = std::fabs(x - static_cast<double>(a)), db = std::fabs(x - static_cast<double>(b));
    return da < db || (da == db && a < b);
  });
  c.resize(std::min<size_t>(c.size(), n));
  std::sort(c.begin(), c.end());
  return c;
}

std::vector<double> coefficients(const ResizeAttrs &a, double ratio) {
  if (a.mode == "nearest") {
    if (ratio == std::floor(ratio))
      return {0, 1};
    if (a.nearest == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (a.nearest == "floor")
      return {1, 0};
    if (a.nearest == "ceil")
      return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};  // round_prefer_floor
  }
  if (a.mode == "linear")
    return {1 - ratio, ratio};
  double A = a.cubicA, r1 = ratio + 1, s = 1 - ratio, s1 = s + 1;
  return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
          ((A + 2) * s - (A + 3)) * s * s + 1, ((A * s1 - 5 * A) * s1 + 8 * A) * s1 - 4 * A};
}

// The taps of an axis of `in` elements resized to `out` at `scale` (the output length as ONNX's
// reference takes it is scale * in, not rounded), with roi [start, end] for tf_crop_and_resize.
AxisTaps axisTaps(const ResizeAttrs &a, int64_t in, int64_t out, double scale, double roiStart, double roiEnd) {
  AxisTaps r;
  double width = scale * static_cast<double>(in), inW = static_cast<double>(in);
  for (int64_t o = 0; o < out; ++o) {
    double x = static_cast<double>(o), xo;
    const std::string &m = a.transform;
    if (m == "align_corners")
      xo = width == 1 ? 0.0 : x * (inW - 1) / (width - 1);
    else if (m == "asymmetric")
      xo = x / scale;
    else if (m == "tf_half_pixel_for_nn")
      xo = (x + 0.5) / scale;
    else if (m == "tf_crop_and_resize")
      xo = (width == 1 ? (roiEnd - roiStart) * (inW - 1) / 2 : x * (roiEnd - roiStart) * (inW - 1) / (width - 1)) +
           roiStart * (inW - 1);
    else if (m == "pytorch_half_pixel")
      xo = width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (m == "half_pixel_symmetric") {
      double adjustment = static_cast<double>(out) / width;
      double center = inW / 2, offset = center * (1 - adjustment);
      xo = offset + (x + 0.5) / scale - 0.5;
    } else
      xo = (x + 0.5) / scale - 0.5;  // half_pixel
    bool outside = m == "tf_crop_and_resize" && (xo < 0 || xo > inW - 1);
    double ratio = xo == std::floor(xo) ? 1.0 : xo - std::floor(xo);
    std::vector<double> c = coefficients(a, ratio);
    int64_t n = c.size(), pad = (n + 1) / 2;
    // The n nearest positions in the input padded by `pad` on each side (edge values).
    std::vector<int64_t> idx = nearestIndices(xo + static_cast<double>(pad), n, in + 2 * pad);
    if (a.excludeOutside) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        int64_t i = idx[t] - pad;
        if (i < 0 || i >= in)
          c[t] = 0;
        sum += c[t];
      }
      for (double &v : c)
        v /= sum;
    }
    r.taps = n;
    for (int64_t t = 0; t < n; ++t) {
      r.indices.push_back(std::clamp<int64_t>(idx[t] - pad, 0, in - 1));
      r.weights.push_back(c[t]);
    }
    r.outside.push_back(outside);
  }
  // Nearest keeps only the tap of weight 1.
  if (a.mode == "nearest") {
    AxisTaps one;
    one.taps = 1;
    one.outside = r.outside;
    for (int64_t o = 0; o < out; ++o) {
      int64_t t = r.weights[o * r.taps] != 0 ? 0 : 1;
      one.indices.push_back(r.indices[o * r.taps + t]);
      one.weights.push_back(1.0);
    }
    r = std::move(one);
  }
  r.identity = in == out && llvm::none_of(r.outside, [](bool b) { return b; });
  for (int64_t o = 0; o < out && r.identity; ++o)
    for (int64_t t = 0; t < r.taps; ++t) {
      double w = r.weights[o * r.taps + t];
      if (w != 0 && (w != 1 || r.indices[o * r.taps + t] != o))
        r.identity = false;
    }
  return r;
}

// `x` resized along `axis` by `taps` (one linalg.generic).
Value resizeAxis(NodeContext &ctx, Value x, int64_t axis, const AxisTaps &taps, double extrapolation) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank(), out = static_cast<int64_t>(taps.outside.size()), T = taps.taps;
  SmallVector<int64_t> shape(xt.getShape());
  shape[axis] = out;
  HostTensor idx = HostTensor::zeros(DType::kInt32, {out, T});
  idx.i = taps.indices;
  HostTensor w = HostTensor::zeros(DType::kFloat, {out, T});
  for (size_t k = 0; k < taps.weights.size(); ++k)
    w.f[k] = static_cast<float>(taps.weights[k]);
  bool anyOutside = llvm::any_of(taps.outside, [](bool v) { return v; });
  HostTensor outside = HostTensor::zeros(DType::kInt8, {out});
  for (int64_t o = 0; o < out; ++o)
    outside.i[o] = taps.outside[o];
  SmallVector<Value> inputs = {constantTensor(b, loc, idx), constantTensor(b, loc, w)};
  AffineExpr o = getAffineDimExpr(axis, mc), t = getAffineDimExpr(rank, mc);
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, {o, t}, mc), AffineMap::get(rank + 1, 0, {o, t}, mc)};
  if (anyOutside) {
    inputs.push_back(constantTensor(b, loc, outside));
    maps.push_back(AffineMap::get(rank + 1, 0, {o}, mc));
  }
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, mc));
  maps.push_back(AffineMap::get(rank + 1, 0, outExprs, mc));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Type et = xt.getElementType();
  bool isF = isa<FloatType>(et);
  Value init = tensor::EmptyOp::create(b, loc, shape, et);
  // One tap (nearest) copies, so any element type is exact; several accumulate floats from 0.
  if (T > 1)
    init = linalg::FillOp::create(b, loc, ValueRange{floatConst(b, loc, 0.0)}, ValueRange{init}).getResult(0);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(d == axis ? arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]).getResult()
                                     : linalg::IndexOp::create(nb, nl, d).getResult());
        Value v = tensor::ExtractOp::create(nb, nl, x, coords);
        Value r = T > 1 ? arith::AddFOp::create(nb, nl, a.back(), arith::MulFOp::create(nb, nl, a[1], v)).getResult() : v;
        if (anyOutside) {
          Value out = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, a[2],
                                            arith::ConstantIntOp::create(nb, nl, 0, 8));
          Value e = isF ? floatConst(nb, nl, extrapolation)
                        : arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(et, static_cast<int64_t>(extrapolation)))
                              .getResult();
          r = arith::SelectOp::create(nb, nl, out, e, r);
        }
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

LogicalResult convertResize(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  ResizeAttrs a;
  a.mode = ctx.attrString("mode", "nearest");
  a.transform = ctx.attrString("coordinate_transformation_mode", "half_pixel");
  a.nearest = ctx.attrString("nearest_mode", "round_prefer_floor");
  a.cubicA = ctx.attrFloat("cubic_coeff_a", -0.75f);
  a.extrapolation = ctx.attrFloat("extrapolation_value", 0.0f);
  a.excludeOutside = ctx.attrInt("exclude_outside", 0) != 0;
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    return ctx.error() << "mode '" << a.mode << "' is not one of nearest, linear, cubic";
  static const char *transforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_crop_and_resize", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  if (llvm::none_of(transforms, [&](const char *t) { return a.transform == t; }))
    return ctx.error() << "coordinate_transformation_mode '" << a.transform << "' is not supported";
  if (a.nearest != "round_prefer_floor" && a.nearest != "round_prefer_ceil" && a.nearest != "floor" &&
      a.nearest != "ceil")
    return ctx.error() << "nearest_mode '" << a.nearest << "' is not supported";
  if (ctx.attrInt("antialias", 0) != 0 && a.mode != "nearest")
    return ctx.error() << "antialias=1 (a widened filter when downsampling) is not supported; export without "
                          "antialiasing";
  if (a.mode != "nearest" && !isFloat(x.type))
    return ctx.error() << "mode '" << a.mode << "' needs a float input (nearest copies any type)";
  int64_t rank = x.rank();
  // opset 18: `axes` says which axes scales/sizes/roi give; the others keep their size.
  std::vector<int64_t> axes;
  if (ctx.attr("axes")) {
    axes = ctx.attrInts("axes");
    for (int64_t &ax : axes)
      if (!normalizeAxis(ax, rank))
        return ctx.error() << "axis " << ax << " is out of range for rank " << rank;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t k = axes.size();
  std::vector<double> scales(rank, 1.0), roiStart(rank, 0.0), roiEnd(rank, 1.0);
  std::vector<int64_t> outShape = x.shape;
  bool haveSizes = ctx.hasInput(3) && !(ctx.input(3).isConstant() && ctx.input(3).numElements() == 0);
  bool haveScales = ctx.hasInput(2) && !(ctx.input(2).isConstant() && ctx.input(2).numElements() == 0);
  if (haveSizes == haveScales)
    return ctx.error() << "exactly one of scales (input 2) and sizes (input 3) must be given";
  if (haveScales) {
    auto s = ctx.requireConstant(2, "scales");
    if (failed(s))
      return failure();
    if (s->numElements() != k)
      return ctx.error() << "scales holds " << s->numElements() << " values for " << k << " axes";
    for (int64_t i = 0; i < k; ++i) {
      double v = s->asDouble(i);
      if (!(v > 0) || !std::isfinite(v))
        return ctx.error() << "scale " << v << " must be positive";
      scales[axes[i]] = v;
      double size = std::floor(v * static_cast<double>(x.shape[axes[i]]));
      if (size > static_cast<double>(int64_t{1} << 40))
        return ctx.error() << "scale " << v << " makes axis " << axes[i] << " too large";
      outShape[axes[i]] = static_cast<int64_t>(size);
    }
  } else {
    auto s = ctx.requireConstant(3, "sizes");
    if (failed(s))
      return failure();
    if (s->numElements() != k)
      return ctx.error() << "sizes holds " << s->numElements() << " values for " << k << " axes";
    std::string policy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return ctx.error() << "keep_aspect_ratio_policy '" << policy << "' is not one of stretch, not_larger, not_smaller";
    double common = policy == "not_larger" ? INFINITY : 0.0;
    for (int64_t i = 0; i < k; ++i) {
      int64_t size = s->asInt(i), in = x.shape[axes[i]];
      if (size < 0 || in == 0)
        return ctx.error() << "size " << size << " of axis " << axes[i] << " (of " << in << ") is not valid";
      double sc = static_cast<double>(size) / static_cast<double>(in);
      scales[axes[i]] = sc;
      outShape[axes[i]] = size;
      common = policy == "not_larger" ? std::min(common, sc) : std::max(common, sc);
    }
    if (policy != "stretch")
      for (int64_t i = 0; i < k; ++i) {
        scales[axes[i]] = common;
        outShape[axes[i]] = static_cast<int64_t>(std::round(common * static_cast<double>(x.shape[axes[i]])));
      }
  }
  if (a.transform == "tf_crop_and_resize") {
    auto roi = ctx.hasInput(1) ? ctx.requireConstant(1, "roi") : FailureOr<HostTensor>(failure());
    if (!ctx.hasInput(1))
      return ctx.error() << "tf_crop_and_resize needs roi (input 1)";
    if (failed(roi))
      return failure();
    if (roi->numElements() != 2 * k)
      return ctx.error() << "roi holds " << roi->numElements() << " values for " << k << " axes (starts, then ends)";
    for (int64_t i = 0; i < k; ++i) {
      roiStart[axes[i]] = roi->asDouble(i);
      roiEnd[axes[i]] = roi->asDouble(i + k);
    }
  }
  // An axis of scale 1 keeps its size and every element where it is (each transform maps x to x
  // then, and every mode's taps put all weight there) unless tf_crop_and_resize crops it.
  auto unchanged = [&](int64_t d) {
    return outShape[d] == x.shape[d] && scales[d] == 1.0 && a.transform != "tf_crop_and_resize";
  };
  for (int64_t d = 0; d < rank; ++d) {
    if (x.shape[d] == 0 && outShape[d] > 0)
      return ctx.error() << "cannot resize the empty axis " << d;
    // The taps of a resized axis are built at import: 4 per output element at most.
    if (!unchanged(d) && outShape[d] > kMaxFoldedElements / 4)
      return ctx.error() << "axis " << d << " resized to " << outShape[d] << " elements: more than the "
                         << kMaxFoldedElements / 4 << " whose taps Hexir computes at compile time";
  }
  if (elementCount(outShape) == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(x.type, outShape)));
    return success();
  }
  Value v = materialize(ctx, x);
  // Innermost axis first, as the reference nests its 1-D interpolations.
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (unchanged(d))
      continue;
    AxisTaps taps = axisTaps(a, x.shape[d], outShape[d], scales[d], roiStart[d], roiEnd[d]);
    if (!taps.identity)
      v = resizeAxis(ctx, v, d, taps, a.extrapolation);
  }
  ctx.setOutput(0, OnnxValue::ofValue(v, x.type));
  return success();
}

// GridSample (2-D): out[n, c, h, w] samples X[n, c] at grid[n, h, w] = (x, y) in [-1, 1].
LogicalResult convertGridSample(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0), &grid = ctx.input(1);
  if (!isFloat(x.type) || !isFloat(grid.type) || x.rank() != 4 || grid.rank() != 4 || grid.shape[3] != 2 ||
      grid.shape[0] != x.shape[0])
    return ctx.error() << "X must be a float [N, C, H, W] and grid [N, H_out, W_out, 2] (2-D sampling)";
  std::string mode = ctx.attrString("mode", "bilinear"), padding = ctx.attrString("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.error() << "mode '" << mode << "' is not bilinear, nearest or bicubic";
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.error() << "padding_mode '" << padding << "' is not zeros, border or reflection";
  bool align = ctx.attrInt("align_corners", 0) != 0;
  int64_t h = x.shape[2], w = x.shape[3];
  std::vector<int64_t> shape = {x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]};
  if (elementCount(shape) == 0 || h == 0 || w == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(DType::kFloat, shape)));
    return success();
  }
  Value xv = materialize(ctx, x), gv = materialize(ctx, grid);
  Value out = generate(ctx, shape, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    auto c = [&](double v) { return floatConst(b, l, v); };
    auto add = [&](Value p, Value q) { return arith::AddFOp::create(b, l, p, q).getResult(); };
    auto sub = [&](Value p, Value q) { return arith::SubFOp::create(b, l, p, q).getResult(); };
    auto mul = [&](Value p, Value q) { return arith::MulFOp::create(b, l, p, q).getResult(); };
    // Clamped into [0, hi]; NaN (a NaN grid value) becomes 0: maxnumf and minnumf take the number,
    // so no index computed from it is ever outside the image.
    auto clip = [&](Value v, double hi) {
      return arith::MinNumFOp::create(b, l, arith::MaxNumFOp::create(b, l, v, c(0.0)), c(hi)).getResult();
    };
    // The grid's coordinate in pixels.
    auto unnormalize = [&](Value g, int64_t size) -> Value {
      double s = static_cast<double>(size);
      return align ? mul(mul(add(g, c(1.0)), c(0.5)), c(s - 1)) : mul(sub(mul(add(g, c(1.0)), c(s)), c(1.0)), c(0.5));
    };
    // PyTorch's reflect_coordinates over [low2 / 2, high2 / 2].
    auto reflect = [&](Value v, double low2, double high2) -> Value {
      if (low2 == high2)
        return c(0.0);
      double lo = low2 / 2, span = (high2 - low2) / 2;
      Value in = math::AbsFOp::create(b, l, sub(v, c(lo)));
      Value flips = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, in, c(span)));
      Value extra = sub(in, mul(flips, c(span)));
      Value even = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                         sub(flips, mul(math::FloorOp::create(b, l, mul(flips, c(0.5))), c(2.0))), c(0.0));
      return arith::SelectOp::create(b, l, even, add(extra, c(lo)), add(sub(c(span), extra), c(lo)));
    };
    // The padding mode applied to a coordinate (zeros: as it is; taps outside read 0).
    auto pad = [&](Value v, int64_t size) -> Value {
      double s = static_cast<double>(size);
      if (padding == "border")
        return clip(v, s - 1);
      if (padding == "reflection")
        return clip(align ? reflect(v, 0, 2 * (s - 1)) : reflect(v, -1, 2 * s - 1), s - 1);
      return v;
    };
    SmallVector<Value> g = {at[0], at[2], at[3], arith::ConstantIndexOp::create(b, l, 0)};
    Value gx = tensor::ExtractOp::create(b, l, gv, g);
    g[3] = arith::ConstantIndexOp::create(b, l, 1);
    Value gy = tensor::ExtractOp::create(b, l, gv, g);
    Value ix = unnormalize(gx, w), iy = unnormalize(gy, h);
    // X at integer coordinates (floats), 0 outside the image.
    auto tap = [&](Value fx, Value fy) -> Value {
      Value inside = arith::AndIOp::create(
          b, l,
          arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fx, c(0.0)),
                                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fx, c(w - 1))),
          arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fy, c(0.0)),
                                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fy, c(h - 1))));
      auto index = [&](Value f, int64_t size) -> Value {
        Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), clip(f, static_cast<double>(size - 1)));
        return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
      };
      Value v = tensor::ExtractOp::create(b, l, xv, ValueRange{at[0], at[1], index(fy, h), index(fx, w)});
      return arith::SelectOp::create(b, l, inside, v, c(0.0));
    };
    if (mode == "nearest") {
      ix = roundHalfToEven(b, l, pad(ix, w));
      iy = roundHalfToEven(b, l, pad(iy, h));
      return tap(ix, iy);
    }
    if (mode == "bilinear") {
      ix = pad(ix, w);
      iy = pad(iy, h);
      Value x0 = math::FloorOp::create(b, l, ix), y0 = math::FloorOp::create(b, l, iy);
      Value x1 = add(x0, c(1.0)), y1 = add(y0, c(1.0));
      Value tx = sub(ix, x0), ty = sub(iy, y0), sx = sub(c(1.0), tx), sy = sub(c(1.0), ty);
      Value r = mul(mul(tap(x0, y0), sx), sy);
      r = add(r, mul(mul(tap(x1, y0), tx), sy));
      r = add(r, mul(mul(tap(x0, y1), sx), ty));
      return add(r, mul(mul(tap(x1, y1), tx), ty));
    }
    // Bicubic (A = -0.75) over the 4x4 taps around the unpadded coordinate; each tap's
    // coordinate padded on its own.
    Value fx = math::FloorOp::create(b, l, ix), fy = math::FloorOp::create(b, l, iy);
    Value tx = sub(ix, fx), ty = sub(iy, fy);
    auto coeffs = [&](Value t) {
      double A = -0.75;
      auto near = [&](Value d) {  // ((A + 2) d - (A + 3)) d^2 + 1
        return add(mul(sub(mul(c(A + 2), d), c(A + 3)), mul(d, d)), c(1.0));
      };
      auto far = [&](Value d) {  // ((A d - 5A) d + 8A) d - 4A
        return sub(mul(add(mul(sub(mul(c(A), d), c(5 * A)), d), c(8 * A)), d), c(4 * A));
      };
      return std::array<Value, 4>{far(add(t, c(1.0))), near(t), near(sub(c(1.0), t)), far(sub(c(2.0), t))};
    };
    std::array<Value, 4> cx = coeffs(tx), cy = coeffs(ty);
    Value r = c(0.0);
    for (int i = 0; i < 4; ++i) {
      Value row = c(0.0);
      Value yy = pad(add(fy, c(i - 1)), h);
      for (int j = 0; j < 4; ++j)
        row = add(row, mul(tap(pad(add(fx, c(j - 1)), w), yy), cx[j]));
      r = add(r, mul(row, cy[i]));
    }
    return r;
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, DType::kFloat));
  return success();
}

} // namespace

void addResizeOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"GridSample", 16, 21, convertGridSample, "2-D (4-D X)", "align_corners mode padding_mode", 2},
      {"Resize", 13, 21, convertResize, "roi, scales and sizes known at compile time; no antialias",
       "antialias axes coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value "
       "keep_aspect_ratio_policy mode nearest_mode",
       1, nullptr, true},
  });
}

} // namespace hexir::onnx_import

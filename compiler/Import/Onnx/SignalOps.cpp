//===- SignalOps.cpp - ONNX DFT, STFT, MelWeightMatrix and Det ------------===//
//
// DFT is a contraction with constant twiddle factors (cos and sin of 2 pi n k / N, computed at
// import in double): one linalg.generic per output component with a reduction loop over the
// signal. O(N x K) per signal: a direct transform, not an FFT, which suits the short transforms
// of audio front ends; STFT is the same contraction per frame. Det is Gaussian elimination with partial pivoting unrolled in a kernel
// body, one matrix per element (small matrices: n <= kMaxDetSize).
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

constexpr int64_t kMaxDetSize = 8;

// The twiddle factors of an N-point transform, [have samples, k frequencies]: cos and s sin of
// 2 pi n k / N (s = 1 forward; -1 and divided by N inverse), computed in double.
std::pair<HostTensor, HostTensor> twiddles(int64_t n, int64_t have, int64_t k, bool inverse) {
  HostTensor cosT = HostTensor::zeros(DType::kFloat, {have, k}), sinT = HostTensor::zeros(DType::kFloat, {have, k});
  double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t i = 0; i < have; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double angle = 2.0 * M_PI * static_cast<double>((i * j) % n) / static_cast<double>(n);
      cosT.f[i * k + j] = static_cast<float>(std::cos(angle) * scale);
      sinT.f[i * k + j] = static_cast<float>(std::sin(angle) * scale * (inverse ? -1.0 : 1.0));
    }
  return {std::move(cosT), std::move(sinT)};
}

// One output component of a transform: component 0 is xr cos + xi sin, component 1 is
// xi cos - xr sin (`component` is 0 or 1, an index).
Value twiddleTerm(OpBuilder &b, Location l, Value component, Value re, Value im, Value c, Value s) {
  Value isIm = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, component, arith::ConstantIndexOp::create(b, l, 1));
  Value reTerm = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, re, c), arith::MulFOp::create(b, l, im, s));
  Value imTerm = arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, im, c), arith::MulFOp::create(b, l, re, s));
  return arith::SelectOp::create(b, l, isIm, imTerm, reTerm);
}

// DFT of `x` [..., N along axis, ..., 1 or 2]: out [..., K, ..., 2] with K = N (or N/2 + 1
// onesided); re = sum xr cos + s xi sin, im = sum xi cos - s xr sin with s = 1 forward, -1
// inverse (then divided by N), angle 2 pi n k / N.
LogicalResult convertDFT(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type) || x.rank() < 3 || (x.shape.back() != 1 && x.shape.back() != 2))
    return ctx.error() << "input must be a float tensor [batch, signal..., 1 or 2]";
  int64_t rank = x.rank();
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 1 || axis >= rank - 1)
    return ctx.error() << "axis " << ctx.attrInt("axis", 1) << " must name a signal dimension";
  bool inverse = ctx.attrInt("inverse", 0) != 0, onesided = ctx.attrInt("onesided", 0) != 0;
  int64_t n = x.shape[axis];
  if (ctx.hasInput(1)) {
    auto len = ctx.requireScalar(1, "dft_length");
    if (failed(len))
      return failure();
    n = len->asInt(0);
  }
  if (n < 1 || n > (int64_t{1} << 16))
    return ctx.error() << "dft_length " << n << " must be in [1, 65536]";
  if (onesided && x.shape.back() == 2)
    return ctx.error() << "onesided=1 needs a real input";
  int64_t k = onesided ? n / 2 + 1 : n, have = std::min(n, x.shape[axis]);
  // The twiddle factors are constants built at import: two [have, k] tables.
  if (have * k > kMaxFoldedElements / 2)
    return ctx.error() << "a transform of " << have << " samples into " << k << " frequencies needs "
                       << 2 * have * k << " twiddle factors, more than the " << kMaxFoldedElements
                       << " Hexir builds at compile time";
  bool complex = x.shape.back() == 2;
  auto [cosT, sinT] = twiddles(n, have, k, inverse);
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value xv = materialize(ctx, x), cv = constantTensor(b, ctx.loc, cosT), sv = constantTensor(b, ctx.loc, sinT);
  // Loops: the output's dims (the axis now K, the last the component), then n (reduction).
  std::vector<int64_t> outShape = x.shape;
  outShape[axis] = k;
  outShape.back() = 2;
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, mc));
  AffineExpr nn = getAffineDimExpr(rank, mc), kk = getAffineDimExpr(axis, mc);
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, {nn, kk}, mc), AffineMap::get(rank + 1, 0, {nn, kk}, mc),
                                 AffineMap::get(rank + 1, 0, outExprs, mc)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, b.getF32Type());
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{floatConst(b, ctx.loc, 0.0)}, ValueRange{empty}).getResult(0);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{cv, sv}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank - 1; ++d)
          at.push_back(d == axis ? linalg::IndexOp::create(nb, nl, rank).getResult()
                                 : linalg::IndexOp::create(nb, nl, d).getResult());
        at.push_back(arith::ConstantIndexOp::create(nb, nl, 0));
        Value re = tensor::ExtractOp::create(nb, nl, xv, at);
        Value im = floatConst(nb, nl, 0.0);
        if (complex) {
          at.back() = arith::ConstantIndexOp::create(nb, nl, 1);
          im = tensor::ExtractOp::create(nb, nl, xv, at);
        }
        Value term = twiddleTerm(nb, nl, linalg::IndexOp::create(nb, nl, rank - 1), re, im, a[0], a[1]);
        linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], term)});
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), DType::kFloat));
  return success();
}

// Det of each [n, n] matrix of `x` [..., n, n].
LogicalResult convertDet(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type) || x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2])
    return ctx.error() << "input must be a float tensor [..., n, n]";
  int64_t n = x.shape.back();
  if (n > kMaxDetSize)
    return ctx.error() << "matrices of " << n << "x" << n << " are larger than the " << kMaxDetSize << "x"
                       << kMaxDetSize << " Hexir computes determinants of";
  std::vector<int64_t> outShape(x.shape.begin(), x.shape.end() - 2);
  if (n == 0) {
    HostTensor one = HostTensor::zeros(DType::kFloat, outShape);
    for (float &v : one.f)
      v = 1.0f;
    ctx.setOutput(0, OnnxValue::ofConstant(std::move(one)));
    return success();
  }
  Value xv = materialize(ctx, x);
  Value out = generate(ctx, outShape, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    std::vector<std::vector<Value>> a(n, std::vector<Value>(n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        SmallVector<Value> coords(at.begin(), at.end());
        coords.push_back(arith::ConstantIndexOp::create(b, l, i));
        coords.push_back(arith::ConstantIndexOp::create(b, l, j));
        a[i][j] = tensor::ExtractOp::create(b, l, xv, coords);
      }
    Value det = floatConst(b, l, 1.0), zero = floatConst(b, l, 0.0);
    for (int64_t k = 0; k < n; ++k) {
      // Partial pivoting, branch-free: bring the largest |a[i][k]| (i >= k) to row k.
      for (int64_t i = k + 1; i < n; ++i) {
        Value larger = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, math::AbsFOp::create(b, l, a[i][k]),
                                             math::AbsFOp::create(b, l, a[k][k]));
        for (int64_t j = k; j < n; ++j) {
          Value top = a[k][j], row = a[i][j];
          a[k][j] = arith::SelectOp::create(b, l, larger, row, top);
          a[i][j] = arith::SelectOp::create(b, l, larger, top, row);
        }
        det = arith::SelectOp::create(b, l, larger, arith::NegFOp::create(b, l, det), det);
      }
      Value pivot = a[k][k];
      det = arith::MulFOp::create(b, l, det, pivot);
      // A zero pivot: the determinant is 0 (det already is); divide by 1 instead.
      Value isZero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, pivot, zero);
      Value safe = arith::SelectOp::create(b, l, isZero, floatConst(b, l, 1.0), pivot);
      for (int64_t i = k + 1; i < n; ++i) {
        Value f = arith::DivFOp::create(b, l, a[i][k], safe);
        for (int64_t j = k + 1; j < n; ++j)
          a[i][j] = arith::SubFOp::create(b, l, a[i][j], arith::MulFOp::create(b, l, f, a[k][j]));
      }
    }
    return det;
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, DType::kFloat));
  return success();
}


// STFT of `signal` [batch, length, 1 or 2]: frames of frame_length samples every frame_step,
// each multiplied by the window (if any) and transformed: out [batch, frames, K, 2] with K the
// frame length (or half of it plus one, onesided). One contraction like DFT's, reading the
// signal at frame * step + sample.
LogicalResult convertSTFT(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (!isFloat(x.type) || x.rank() != 3 || (x.shape.back() != 1 && x.shape.back() != 2))
    return ctx.error() << "signal must be a float tensor [batch, length, 1 or 2]";
  auto stepT = ctx.requireScalar(1, "frame_step");
  if (failed(stepT))
    return failure();
  int64_t step = stepT->asInt(0), n = -1;
  if (ctx.hasInput(2)) {
    const OnnxValue &w = ctx.input(2);
    if (!isFloat(w.type) || w.rank() != 1)
      return ctx.error() << "window must be a float vector";
    n = w.shape[0];
  }
  if (ctx.hasInput(3)) {
    auto len = ctx.requireScalar(3, "frame_length");
    if (failed(len))
      return failure();
    if (n >= 0 && len->asInt(0) != n)
      return ctx.error() << "frame_length " << len->asInt(0) << " differs from the window's length " << n;
    n = len->asInt(0);
  }
  if (n < 0)
    return ctx.error() << "needs a window or a frame_length";
  bool onesided = ctx.attrInt("onesided", 1) != 0, complex = x.shape.back() == 2;
  if (onesided && complex)
    return ctx.error() << "onesided=1 needs a real signal";
  if (n < 1 || n > x.shape[1] || step < 1)
    return ctx.error() << "frame_length " << n << " must be in [1, " << x.shape[1] << "] and frame_step " << step
                       << " positive";
  int64_t k = onesided ? n / 2 + 1 : n, frames = (x.shape[1] - n) / step + 1;
  if (n * k > kMaxFoldedElements / 2)
    return ctx.error() << "frames of " << n << " samples into " << k << " frequencies need " << 2 * n * k
                       << " twiddle factors, more than the " << kMaxFoldedElements << " Hexir builds at compile time";
  auto [cosT, sinT] = twiddles(n, n, k, /*inverse=*/false);
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value xv = materialize(ctx, x);
  SmallVector<Value> ins = {constantTensor(b, ctx.loc, cosT), constantTensor(b, ctx.loc, sinT)};
  // Loops (batch, frame, frequency, component, sample).
  AffineExpr j = getAffineDimExpr(4, mc), kk = getAffineDimExpr(2, mc);
  SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {j, kk}, mc), AffineMap::get(5, 0, {j, kk}, mc)};
  bool windowed = ctx.hasInput(2);
  if (windowed) {
    ins.push_back(materialize(ctx, ctx.input(2)));
    maps.push_back(AffineMap::get(5, 0, {j}, mc));
  }
  maps.push_back(AffineMap::get(5, 0, {getAffineDimExpr(0, mc), getAffineDimExpr(1, mc), kk, getAffineDimExpr(3, mc)}, mc));
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  std::vector<int64_t> outShape = {x.shape[0], frames, k, 2};
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, b.getF32Type());
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{floatConst(b, ctx.loc, 0.0)}, ValueRange{empty}).getResult(0);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value at = arith::AddIOp::create(
            nb, nl,
            arith::MulIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 1), arith::ConstantIndexOp::create(nb, nl, step)),
            linalg::IndexOp::create(nb, nl, 4));
        Value batch = linalg::IndexOp::create(nb, nl, 0);
        Value re = tensor::ExtractOp::create(nb, nl, xv, ValueRange{batch, at, arith::ConstantIndexOp::create(nb, nl, 0)});
        Value im = complex ? tensor::ExtractOp::create(nb, nl, xv, ValueRange{batch, at, arith::ConstantIndexOp::create(nb, nl, 1)})
                                 .getResult()
                           : floatConst(nb, nl, 0.0);
        if (windowed) {
          re = arith::MulFOp::create(nb, nl, re, a[2]);
          im = arith::MulFOp::create(nb, nl, im, a[2]);
        }
        Value term = twiddleTerm(nb, nl, linalg::IndexOp::create(nb, nl, 3), re, im, a[0], a[1]);
        linalg::YieldOp::create(nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a.back(), term)});
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), DType::kFloat));
  return success();
}

} // namespace

void addSignalOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Det", 13, 21, convertDet, "matrices up to 8x8", "", 1},
      {"DFT", 17, 21, convertDFT, "a direct O(N K) transform; dft_length known at compile time", "axis inverse onesided",
       1},
      {"STFT", 17, 21, convertSTFT, "a direct O(N K) transform per frame; frame_step and frame_length known at compile time",
       "onesided", 1},

  });
}

} // namespace hexir::onnx_import

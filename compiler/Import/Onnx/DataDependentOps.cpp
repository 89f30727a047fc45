//===- DataDependentOps.cpp - ONNX ops whose output shape follows the values ===//
//
// Compress, NonZero and Unique size their outputs by the values they read. Hexir plans static
// shapes, so the values that decide the shape must be known at compile time (an initializer, a
// constant computation, or a model input fixed with --fix-input, which the error names):
// Compress then gathers at constant indices at run time; NonZero and Unique fold entirely.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <numeric>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Compress: the slices along `axis` (of the flattened input without one) whose condition holds.
LogicalResult convertCompress(NodeContext &ctx) {
  auto cond = ctx.requireConstant(1, "condition (it decides the output's shape)");
  if (failed(cond))
    return failure();
  OnnxValue x = ctx.input(0);
  int64_t axis = 0;
  if (ctx.attr("axis")) {
    auto a = ctx.axisAttr("axis", 0, x.rank());
    if (failed(a))
      return failure();
    axis = *a;
  } else {
    x = reshaped(ctx, x, {x.numElements()});
  }
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(cond->numElements(), x.shape[axis]); ++i)
    if (cond->asDouble(i) != 0.0)
      keep.push_back(i);
  std::vector<int64_t> shape = x.shape;
  shape[axis] = static_cast<int64_t>(keep.size());
  if (elementCount(shape) == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(x.type, shape)));
    return success();
  }
  Value xv = materialize(ctx, x);
  Value table = constantTensor(ctx.b, ctx.loc, HostTensor::fromInts(keep, {shape[axis]}));
  Value out = generate(ctx, shape, x.type, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    SmallVector<Value> coords(at.begin(), at.end());
    coords[axis] = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                              tensor::ExtractOp::create(b, l, table, ValueRange{at[axis]}));
    return tensor::ExtractOp::create(b, l, xv, coords);
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, x.type));
  return success();
}

// NonZero: the coordinates of the non-zero elements, [rank, count], in row-major order.
LogicalResult convertNonZero(NodeContext &ctx) {
  auto x = ctx.requireConstant(0, "input (its values decide the output's shape)");
  if (failed(x))
    return failure();
  int64_t rank = static_cast<int64_t>(x->shape.size()), n = x->numElements();
  std::vector<int64_t> strides = stridesOf(x->shape), hits;
  for (int64_t k = 0; k < n; ++k)
    if (x->asDouble(k) != 0.0)
      hits.push_back(k);
  int64_t count = static_cast<int64_t>(hits.size()), dims = std::max<int64_t>(rank, 1);
  if (!foldable({dims, count}))
    return ctx.error() << "its result " << shapeString({dims, count}) << " is too large to build at compile time";
  HostTensor out = HostTensor::zeros(DType::kInt64, {dims, count});
  for (int64_t c = 0; c < count; ++c)
    for (int64_t d = 0; d < rank; ++d)
      out.i[d * count + c] = hits[c] / strides[d] % x->shape[d];
  ctx.setOutput(0, OnnxValue::ofConstant(std::move(out)));
  return success();
}

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
// appearance, with each one's first index, every element's index among them, and their counts.
LogicalResult convertUnique(NodeContext &ctx) {
  auto xOr = ctx.requireConstant(0, "input (its values decide the output's shape)");
  if (failed(xOr))
    return failure();
  HostTensor x = *xOr;
  bool sorted = ctx.attrInt("sorted", 1) != 0;
  int64_t axis = -1;
  if (ctx.attr("axis")) {
    auto a = ctx.axisAttr("axis", 0, x.shape.size());
    if (failed(a))
      return failure();
    axis = *a;
  } else {
    x = reshape(x, {x.numElements()});
  }
  int64_t along = axis < 0 ? 0 : axis;
  int64_t slices = x.shape[along];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < along; ++d)
    outer *= x.shape[d];
  for (size_t d = along + 1; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  // Slices compared in place, element by element (no copies: a folded input may hold 2^27).
  auto element = [&](int64_t s, int64_t e) { return x.asDouble((e / inner * slices + s) * inner + e % inner); };
  int64_t width = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < width; ++e) {
      double va = element(a, e), vb = element(b, e);
      if (va != vb)
        return va < vb;
    }
    return false;
  };
  // Sorted by value, equal slices in order of appearance: each run of equals is one unique value,
  // its first index the run's first.
  std::vector<int64_t> bySlice(slices);
  std::iota(bySlice.begin(), bySlice.end(), 0);
  std::stable_sort(bySlice.begin(), bySlice.end(), less);
  std::vector<int64_t> first, counts, inverse(slices);  // per unique value, in sorted order
  for (int64_t k = 0; k < slices; ++k) {
    int64_t s = bySlice[k];
    if (k == 0 || less(bySlice[k - 1], s)) {
      first.push_back(s);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[s] = static_cast<int64_t>(first.size()) - 1;
  }
  int64_t u = static_cast<int64_t>(first.size());
  // The output order: sorted, or by first appearance.
  std::vector<int64_t> order(u);
  std::iota(order.begin(), order.end(), 0);
  if (!sorted)
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  std::vector<int64_t> position(u);
  for (int64_t k = 0; k < u; ++k)
    position[order[k]] = k;
  std::vector<int64_t> yShape = x.shape;
  yShape[along] = u;
  HostTensor y = HostTensor::zeros(x.type, yShape);
  for (int64_t k = 0; k < u; ++k) {
    int64_t from = first[order[k]];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * u + k) * inner + i;
        double e = element(from, o * inner + i);
        if (isFloat(y.type))
          y.f[at] = static_cast<float>(e);
        else
          y.i[at] = static_cast<int64_t>(e);
      }
  }
  HostTensor idx = HostTensor::zeros(DType::kInt64, {u}), cnt = HostTensor::zeros(DType::kInt64, {u}),
             inv = HostTensor::zeros(DType::kInt64, {slices});
  for (int64_t k = 0; k < u; ++k) {
    idx.i[k] = first[order[k]];
    cnt.i[k] = counts[order[k]];
  }
  for (int64_t s = 0; s < slices; ++s)
    inv.i[s] = position[inverse[s]];
  ctx.setOutput(0, OnnxValue::ofConstant(std::move(y)));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, OnnxValue::ofConstant(std::move(idx)));
  if (ctx.hasOutput(2))
    ctx.setOutput(2, OnnxValue::ofConstant(std::move(inv)));
  if (ctx.hasOutput(3))
    ctx.setOutput(3, OnnxValue::ofConstant(std::move(cnt)));
  return success();
}

} // namespace

void addDataDependentOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Compress", 13, 21, convertCompress, "condition known at compile time (it decides the shape)", "axis", 2,
       nullptr, true},
      {"NonZero", 13, 21, convertNonZero, "input known at compile time (it decides the shape)", "", 1, nullptr, true},
      {"Unique", 13, 21, convertUnique, "input known at compile time (it decides the shapes)", "axis sorted", 1,
       nullptr, true},
  });
}

} // namespace hexir::onnx_import

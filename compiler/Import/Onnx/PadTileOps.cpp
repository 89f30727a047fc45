//===- PadTileOps.cpp - ONNX Pad (every mode) and Tile --------------------===//
//
// A constant Pad is tensor.pad (after a slice for negative pads, which crop). Pad's edge,
// reflect and wrap modes and Tile are copies whose every element reads the input at
// coordinates computed from its own: one linalg.generic with tensor.extract.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// The coordinate in [0, n) that output coordinate `out` (shifted by `low`) reads in `mode`:
// edge clamps; reflect mirrors without repeating the border (period 2(n-1), as numpy.pad);
// wrap repeats the axis.
Value sourceCoordinate(OpBuilder &b, Location l, Value out, int64_t low, int64_t n, const std::string &mode) {
  auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
  Value i = arith::SubIOp::create(b, l, out, cst(low));
  // A non-negative remainder of i by m.
  auto wrapTo = [&](Value v, int64_t m) -> Value {
    Value r = arith::RemSIOp::create(b, l, v, cst(m));
    Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, cst(0));
    return arith::SelectOp::create(b, l, negative, arith::AddIOp::create(b, l, r, cst(m)), r);
  };
  if (mode == "edge")
    return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, cst(0)), cst(n - 1));
  if (mode == "wrap")
    return wrapTo(i, n);
  if (n == 1)
    return cst(0);
  int64_t period = 2 * (n - 1);
  Value m = wrapTo(i, period);
  Value past = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, m, cst(n));
  return arith::SelectOp::create(b, l, past, arith::SubIOp::create(b, l, cst(period), m), m);
}

LogicalResult convertPad(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  std::string mode = ctx.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && !(mode == "wrap" && ctx.opset() >= 19))
    return ctx.error() << "mode '" << mode << "' is not one of constant, reflect, edge"
                       << (ctx.opset() >= 19 ? ", wrap" : "");
  auto padsT = ctx.requireConstant(1, "pads");
  if (failed(padsT))
    return failure();
  std::vector<int64_t> pads = padsT->ints();
  if (ctx.hasInput(3)) {
    // Opset 18: `axes` names the axes `pads` pads (begins, then ends); the others get none.
    auto axesT = ctx.requireConstant(3, "axes");
    if (failed(axesT))
      return failure();
    std::vector<int64_t> axes = axesT->ints();
    if (pads.size() != 2 * axes.size())
      return ctx.error() << "pads has " << pads.size() << " values for " << axes.size() << " axes";
    std::vector<int64_t> full(2 * x.rank(), 0);
    std::vector<bool> seen(x.rank(), false);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k];
      if (!normalizeAxis(a, x.rank()) || seen[a])
        return ctx.error() << "axes holds " << axes[k] << ", out of range for rank " << x.rank() << " or repeated";
      seen[a] = true;
      full[a] = pads[k];
      full[a + x.rank()] = pads[k + axes.size()];
    }
    pads = full;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * x.rank())
    return ctx.error() << "pads has " << pads.size() << " values for a rank-" << x.rank() << " input";
  HostTensor value = HostTensor::zeros(x.type, {});
  if (ctx.hasInput(2)) {
    auto v = ctx.requireConstant(2, "constant_value");
    if (failed(v))
      return failure();
    if (v->numElements() > 0)
      value = *v;
  }
  std::vector<int64_t> low(pads.begin(), pads.begin() + x.rank()), high(pads.begin() + x.rank(), pads.end());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t size;
    if (__builtin_add_overflow(x.shape[d], low[d], &size) || __builtin_add_overflow(size, high[d], &size))
      return ctx.error() << "pads " << low[d] << " and " << high[d] << " of axis " << d
                         << " overflow its size (" << x.shape[d] << ")";
    if (low[d] < -x.shape[d] || high[d] < -x.shape[d] || size < 0)
      return ctx.error() << "pads " << low[d] << " and " << high[d] << " crop more than axis " << d << " holds ("
                         << x.shape[d] << ")";
    if (mode != "constant" && x.shape[d] == 0 && size > 0)
      return ctx.error() << "mode '" << mode << "' cannot pad the empty axis " << d;
    shape.push_back(size);
  }
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  if (llvm::is_contained(shape, 0)) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(x.type, {shape.begin(), shape.end()})));
    return success();
  }
  Value source = materialize(ctx, x);
  if (mode != "constant") {
    std::string m = mode;
    Value out = generate(ctx, shape, x.type, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
      SmallVector<Value> coords;
      for (int64_t d = 0; d < x.rank(); ++d)
        coords.push_back(sourceCoordinate(nb, nl, at[d], low[d], x.shape[d], m));
      return tensor::ExtractOp::create(nb, nl, source, coords);
    });
    ctx.setOutput(0, OnnxValue::ofValue(out, x.type));
    return success();
  }
  // Negative pads crop: a slice first, then the non-negative pads.
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; })) {
    SmallVector<int64_t> offsets, sizes, strides(x.rank(), 1);
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t start = std::max<int64_t>(0, -low[d]), end = x.shape[d] - std::max<int64_t>(0, -high[d]);
      offsets.push_back(start);
      sizes.push_back(end - start);
      low[d] = std::max<int64_t>(0, low[d]);
      high[d] = std::max<int64_t>(0, high[d]);
    }
    source = tensor::ExtractSliceOp::create(b, ctx.loc, source, getAsIndexOpFoldResult(mc, offsets),
                                            getAsIndexOpFoldResult(mc, sizes), getAsIndexOpFoldResult(mc, strides));
  }
  Value padValue = elementConstant(b, ctx.loc, x.type, value, 0);
  Value out = tensor::PadOp::create(b, ctx.loc, tensorType(mc, shape, x.type), source,
                                    getAsIndexOpFoldResult(mc, low), getAsIndexOpFoldResult(mc, high), padValue);
  ctx.setOutput(0, OnnxValue::ofValue(out, x.type));
  return success();
}

// Tile: the input repeated `repeats[d]` times along each axis d.
LogicalResult convertTile(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto repeatsT = ctx.requireConstant(1, "repeats");
  if (failed(repeatsT))
    return failure();
  std::vector<int64_t> repeats = repeatsT->ints();
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    return ctx.error() << "repeats has " << repeats.size() << " values for a rank-" << x.rank() << " input";
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t size;
    if (repeats[d] < 0)
      return ctx.error() << "repeats " << repeats[d] << " of axis " << d << " is negative";
    if (__builtin_mul_overflow(x.shape[d], repeats[d], &size))
      return ctx.error() << "repeating axis " << d << " " << repeats[d] << " times overflows";
    shape.push_back(size);
  }
  if (elementCount(shape) == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(x.type, shape)));
    return success();
  }
  Value source = materialize(ctx, x);
  Value out = generate(ctx, shape, x.type, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
    SmallVector<Value> coords;
    for (int64_t d = 0; d < x.rank(); ++d)
      coords.push_back(x.shape[d] == shape[d] ? at[d]
                                              : arith::RemUIOp::create(nb, nl, at[d],
                                                                       arith::ConstantIndexOp::create(nb, nl, x.shape[d]))
                                                    .getResult());
    return tensor::ExtractOp::create(nb, nl, source, coords);
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, x.type));
  return success();
}

} // namespace

void addPadTileOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Pad", 13, 21, convertPad, "pads and axes known at compile time", "mode", 2, nullptr, true},
      {"Tile", 13, 21, convertTile, "repeats known at compile time", "", 2, nullptr, true},
  });
}

} // namespace hexir::onnx_import

//===- LinearOps.cpp - ONNX MatMul and Gemm -------------------------------===//
//
// Both are one linalg.generic with a reduction loop: MatMul broadcasts batch dimensions as
// numpy.matmul; Gemm folds its transposes into the indexing maps and starts the accumulator
// at beta * C.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"
#include "Import/Onnx/Quantized.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace hexir::onnx_import {
namespace {

Value zeroFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, DType type = DType::kFloat) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elementType(b.getContext(), type));
  return linalg::FillOp::create(b, loc, ValueRange{scalarConstant(b, loc, type, 0.0)}, ValueRange{empty}).getResult(0);
}

} // namespace

FailureOr<OnnxValue> matmulValues(NodeContext &ctx, const OnnxValue &av, const OnnxValue &bv, DType acc,
                                  bool unsignedA) {
  auto accepts = [acc](DType t) { return t == acc || (acc == DType::kInt32 && t == DType::kInt8); };
  if (!(accepts(av.type) || (unsignedA && acc == DType::kInt32 && av.type == DType::kUInt8)) || !accepts(bv.type))
    return ctx.error() << "inputs must be " << dtypeName(acc) << " tensors";
  if (av.rank() == 0 || bv.rank() == 0)
    return ctx.error() << "inputs must have rank 1 or more";
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  // numpy.matmul: a 1-D A is a row, a 1-D B a column; both dims are dropped from the result.
  std::vector<int64_t> as = av.shape, bs = bv.shape;
  if (av.rank() == 1)
    as.insert(as.begin(), 1);
  if (bv.rank() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return ctx.error() << "shapes " << shapeString(av.shape) << " and " << shapeString(bv.shape)
                       << " do not multiply (" << k << " != " << bs[bs.size() - 2] << ")";
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2), batch;
  if (!broadcastShapes(aBatch, bBatch, batch))
    return ctx.error() << "batch dimensions " << shapeString(aBatch) << " and " << shapeString(bBatch)
                       << " do not broadcast";
  if (k == 0) {
    // Sums of nothing: zeros.
    std::vector<int64_t> shape = batch;
    if (av.rank() > 1)
      shape.push_back(m);
    if (bv.rank() > 1)
      shape.push_back(n);
    if (!foldable(shape))  // filled at load (convertNode refuses it if over 1 TiB)
      return OnnxValue::ofValue(splatConstant(ctx.b, ctx.loc, acc, shape, HostTensor::zeros(acc, {}), 0), acc);
    return OnnxValue::ofConstant(HostTensor::zeros(acc, shape));
  }
  int64_t r = batch.size();
  // Loops: batch..., m, n, k.
  auto d = [&](int64_t i) { return getAffineDimExpr(i, mc); };
  auto operand = [&](const OnnxValue &v, const std::vector<int64_t> &shape, AffineExpr row, AffineExpr col,
                     AffineMap &map) {
    Value value = reshapeView(b, ctx.loc, materialize(ctx, v), shape);
    int64_t lead = r - (static_cast<int64_t>(shape.size()) - 2);
    std::vector<bool> keep(shape.size(), true);
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i + 2 < static_cast<int64_t>(shape.size()); ++i) {
      keep[i] = !(shape[i] == 1 && batch[i + lead] != 1);
      if (keep[i])
        exprs.push_back(d(i + lead));
    }
    exprs.push_back(row);
    exprs.push_back(col);
    map = AffineMap::get(r + 3, 0, exprs, mc);
    return collapseUnitDims(b, ctx.loc, value, keep);
  };
  AffineMap aMap, bMap;
  Value a = operand(av, as, d(r), d(r + 2), aMap);
  Value bb = operand(bv, bs, d(r + 2), d(r + 1), bMap);
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < r + 2; ++i)
    outExprs.push_back(d(i));
  std::vector<int64_t> outShape = batch;
  outShape.push_back(m);
  outShape.push_back(n);
  Value init = zeroFilled(b, ctx.loc, outShape, acc);
  SmallVector<utils::IteratorType> iterators(r + 2, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value out = linalg::GenericOp::create(b, ctx.loc, TypeRange{init.getType()}, ValueRange{a, bb}, ValueRange{init},
                                        SmallVector<AffineMap>{aMap, bMap, AffineMap::get(r + 3, 0, outExprs, mc)},
                                        iterators,
                                        [unsignedA](OpBuilder &nb, Location nl, ValueRange args) {
                                          yieldMultiplyAccumulate(nb, nl, args, 1.0, unsignedA);
                                        })
                  .getResult(0);
  std::vector<int64_t> finalShape = batch;
  if (av.rank() > 1)
    finalShape.push_back(m);
  if (bv.rank() > 1)
    finalShape.push_back(n);
  return OnnxValue::ofValue(reshapeView(b, ctx.loc, out, finalShape), acc);
}

namespace {

LogicalResult convertMatMul(NodeContext &ctx) {
  if (!isFloat(ctx.input(0).type) || !isFloat(ctx.input(1).type))
    return ctx.error() << "inputs must be float tensors";
  FailureOr<std::optional<OnnxValue>> quantized = quantizedMatMul(ctx);
  if (failed(quantized))
    return failure();
  if (*quantized) {
    ctx.setOutput(0, **quantized);
    return success();
  }
  FailureOr<OnnxValue> y = matmulValues(ctx, ctx.input(0), ctx.input(1), DType::kFloat);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult convertGemm(NodeContext &ctx) {
  if (failed(ctx.requireFloatInputs({0, 1, 2})))
    return failure();
  const OnnxValue &av = ctx.input(0), &bv = ctx.input(1);
  if (!isFloat(av.type) || !isFloat(bv.type) || av.rank() != 2 || bv.rank() != 2)
    return ctx.error() << "A and B must be 2-D float tensors";
  FailureOr<std::optional<OnnxValue>> quantized = quantizedGemm(ctx);
  if (failed(quantized))
    return failure();
  if (*quantized) {
    ctx.setOutput(0, **quantized);
    return success();
  }
  bool transA = ctx.attrInt("transA", 0) != 0, transB = ctx.attrInt("transB", 0) != 0;
  double alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
  int64_t m = transA ? av.shape[1] : av.shape[0], k = transA ? av.shape[0] : av.shape[1];
  int64_t kb = transB ? bv.shape[1] : bv.shape[0], n = transB ? bv.shape[0] : bv.shape[1];
  if (k != kb)
    return ctx.error() << "A " << shapeString(av.shape) << " and B " << shapeString(bv.shape)
                       << " do not multiply with transA=" << transA << ", transB=" << transB;
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  std::vector<int64_t> outShape = {m, n};
  Value init;
  if (ctx.hasInput(2) && beta != 0.0) {
    const OnnxValue &c = ctx.input(2);
    std::vector<int64_t> check;
    if (!broadcastShapes(c.shape, outShape, check) || check != outShape)
      return ctx.error() << "C " << shapeString(c.shape) << " does not broadcast to " << shapeString(outShape);
    if (beta == 1.0) {
      init = broadcastTo(ctx, c, outShape);
    } else {
      OnnxValue scaled;
      if (c.isConstant()) {
        HostTensor t = *c.constant;
        for (float &v : t.f)
          v = static_cast<float>(v * beta);
        scaled = OnnxValue::ofConstant(std::move(t));
        init = broadcastTo(ctx, scaled, outShape);
      } else {
        auto mul = elementwise(ctx, {&c}, DType::kFloat, [beta](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::MulFOp::create(nb, nl, a[0], floatConst(nb, nl, beta));
        });
        init = broadcastTo(ctx, *mul, outShape);
      }
    }
  } else {
    init = zeroFilled(b, ctx.loc, outShape);
  }
  if (k == 0) {
    // A product over nothing: beta * C (or zeros).
    ctx.setOutput(0, OnnxValue::ofValue(init, DType::kFloat));
    return success();
  }
  // Loops: m, n, k.
  auto d = [&](int64_t i) { return getAffineDimExpr(i, mc); };
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0, transA ? SmallVector<AffineExpr>{d(2), d(0)} : SmallVector<AffineExpr>{d(0), d(2)}, mc),
      AffineMap::get(3, 0, transB ? SmallVector<AffineExpr>{d(1), d(2)} : SmallVector<AffineExpr>{d(2), d(1)}, mc),
      AffineMap::get(3, 0, {d(0), d(1)}, mc)};
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel, utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  Value out = linalg::GenericOp::create(b, ctx.loc, TypeRange{init.getType()},
                                        ValueRange{materialize(ctx, av), materialize(ctx, bv)}, ValueRange{init},
                                        maps, iterators,
                                        [alpha](OpBuilder &nb, Location nl, ValueRange args) {
                                          yieldMultiplyAccumulate(nb, nl, args, alpha);
                                        })
                  .getResult(0);
  ctx.setOutput(0, OnnxValue::ofValue(out, DType::kFloat));
  return success();
}

} // namespace

void addLinearOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Gemm", 13, 21, convertGemm, "", "alpha beta transA transB", 2},
      {"MatMul", 13, 21, convertMatMul, "float tensors", "", 2},
  });
}

} // namespace hexir::onnx_import

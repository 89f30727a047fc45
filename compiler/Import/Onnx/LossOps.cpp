//===- LossOps.cpp - ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss ===//
//
// Losses are inference-computable (evaluation scripts export them with the model), and
// SoftmaxCrossEntropyLoss is LogSoftmax followed by NegativeLogLikelihoodLoss. Each element
// gathers its target class directly (tensor.extract, as Gather does) instead of reducing over
// the classes: O(N*D) reads, not O(N*C*D).
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

struct LossOptions {
  std::string reduction;               // none, sum or mean
  std::optional<int64_t> ignoreIndex;  // a target equal to it contributes nothing
};

FailureOr<LossOptions> readOptions(NodeContext &ctx) {
  LossOptions o;
  o.reduction = ctx.attrString("reduction", "mean");
  if (o.reduction != "none" && o.reduction != "sum" && o.reduction != "mean")
    return ctx.error() << "reduction '" << o.reduction << "' is not one of none, sum, mean";
  if (ctx.attr("ignore_index") != nullptr)
    o.ignoreIndex = ctx.attrInt("ignore_index", 0);
  return o;
}

// One generic over the target's shape [N, d1, ...] whose body sees the target (block argument 0)
// and yields `body(b, l, target, ignored, classIndex)`: the class clamped into [0, C) so an
// out-of-range target never reads outside a tensor (ONNX leaves its loss undefined).
using TargetBody = std::function<Value(OpBuilder &, Location, Value target, Value ignored, Value cls)>;
Value perTarget(NodeContext &ctx, Value target, int64_t classes, const std::optional<int64_t> &ignoreIndex,
                const TargetBody &body) {
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  auto type = cast<RankedTensorType>(target.getType());
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(b, ctx.loc, type.getShape(), b.getF32Type());
  SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, mc));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{target}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value ignored = arith::ConstantIntOp::create(nb, nl, 0, 1);
        if (ignoreIndex)
          ignored = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq, a[0],
              arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(a[0].getType(), *ignoreIndex)));
        // Clamp, not wrap: a negative target is no index from the end here.
        Value cls = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        cls = arith::MaxSIOp::create(nb, nl, cls, arith::ConstantIndexOp::create(nb, nl, 0));
        cls = arith::MinSIOp::create(nb, nl, cls, arith::ConstantIndexOp::create(nb, nl, classes - 1));
        linalg::YieldOp::create(nb, nl, body(nb, nl, a[0], ignored, cls));
      });
  return generic.getResult(0);
}

// NegativeLogLikelihoodLoss of `x` ([N, C, d1, ...], float) at the node's inputs 1 (target) and
// 2 (weight, optional): loss[n, d] = -x[n, t, d] * w[t], 0 where t is the ignore index; the
// mean divides by the sum of the weights taken (the count when there are none).
FailureOr<OnnxValue> negativeLogLikelihood(NodeContext &ctx, const OnnxValue &x, const LossOptions &o) {
  const OnnxValue &target = ctx.input(1);
  if (!isFloat(x.type))
    return ctx.error() << "input 0 must be a float tensor";
  if (x.rank() < 2)
    return ctx.error() << "input 0 must have rank 2 or more ([N, C, d1, ...]); it has shape "
                       << shapeString(x.shape);
  if (target.type != DType::kInt64 && target.type != DType::kInt32)
    return ctx.error() << "the target must be an int32 or int64 tensor";
  std::vector<int64_t> expected = {x.shape[0]};
  expected.insert(expected.end(), x.shape.begin() + 2, x.shape.end());
  if (target.shape != expected)
    return ctx.error() << "the target " << shapeString(target.shape) << " must have shape "
                       << shapeString(expected) << " (input 0 without its class axis)";
  int64_t classes = x.shape[1];
  bool hasWeight = ctx.hasInput(2);
  if (hasWeight) {
    const OnnxValue &w = ctx.input(2);
    if (!isFloat(w.type) || w.shape != std::vector<int64_t>{classes})
      return ctx.error() << "the weight must be a float tensor of shape [" << classes << "] (one per class)";
  }
  if (classes == 0)
    return ctx.error() << "input 0 has no classes (axis 1 is empty)";
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value xv = materialize(ctx, x), tv = materialize(ctx, target);
  Value wv = hasWeight ? materialize(ctx, ctx.input(2)) : Value();
  std::optional<int64_t> ii = o.ignoreIndex;
  auto weightAt = [&](OpBuilder &nb, Location nl, Value ignored, Value cls) -> Value {
    Value w = hasWeight ? tensor::ExtractOp::create(nb, nl, wv, ValueRange{cls}).getResult() : floatConst(nb, nl, 1.0);
    return arith::SelectOp::create(nb, nl, ignored, floatConst(nb, nl, 0.0), w);
  };
  int64_t rank = x.rank();
  Value loss = perTarget(ctx, tv, classes, ii, [&](OpBuilder &nb, Location nl, Value, Value ignored, Value cls) {
    SmallVector<Value> coords = {linalg::IndexOp::create(nb, nl, 0), cls};
    for (int64_t d = 2; d < rank; ++d)
      coords.push_back(linalg::IndexOp::create(nb, nl, d - 1));
    Value picked = tensor::ExtractOp::create(nb, nl, xv, coords);
    Value weighted = arith::MulFOp::create(nb, nl, picked, weightAt(nb, nl, ignored, cls));
    // A select, not a multiply by 0: an ignored element is 0 even where x is inf.
    return arith::SelectOp::create(nb, nl, ignored, floatConst(nb, nl, 0.0), arith::NegFOp::create(nb, nl, weighted))
        .getResult();
  });
  if (o.reduction == "none")
    return OnnxValue::ofValue(loss, DType::kFloat);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < target.rank(); ++d)
    all.push_back(d);
  OnnxValue sum = OnnxValue::ofValue(reshapeView(b, loc, reduce(ctx, loss, all, ReduceKind::kSum), {}), DType::kFloat);
  if (o.reduction == "sum")
    return sum;
  Value weights = perTarget(ctx, tv, classes, ii, [&](OpBuilder &nb, Location nl, Value, Value ignored, Value cls) {
    return weightAt(nb, nl, ignored, cls);
  });
  OnnxValue total =
      OnnxValue::ofValue(reshapeView(b, loc, reduce(ctx, weights, all, ReduceKind::kSum), {}), DType::kFloat);
  return elementwise(ctx, {&sum, &total}, DType::kFloat, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
    return arith::DivFOp::create(nb, nl, a[0], a[1]);
  });
}

LogicalResult convertNegativeLogLikelihoodLoss(NodeContext &ctx) {
  auto o = readOptions(ctx);
  if (failed(o))
    return failure();
  auto loss = negativeLogLikelihood(ctx, ctx.input(0), *o);
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  return success();
}

LogicalResult convertSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  auto o = readOptions(ctx);
  if (failed(o))
    return failure();
  const OnnxValue &scores = ctx.input(0);
  if (!isFloat(scores.type) || scores.rank() < 2)
    return ctx.error() << "the scores must be a float tensor of rank 2 or more ([N, C, d1, ...])";
  auto logProb = softmax(ctx, scores, 1, /*log=*/true);
  if (failed(logProb))
    return failure();
  auto loss = negativeLogLikelihood(ctx, *logProb, *o);
  if (failed(loss))
    return failure();
  ctx.setOutput(0, *loss);
  if (ctx.hasOutput(1))
    ctx.setOutput(1, *logProb);
  return success();
}

} // namespace

void addLossOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"NegativeLogLikelihoodLoss", 13, 21, convertNegativeLogLikelihoodLoss,
       "out-of-range targets (not the ignore index) are clamped", "ignore_index reduction", 2},
      {"SoftmaxCrossEntropyLoss", 13, 21, convertSoftmaxCrossEntropyLoss,
       "out-of-range targets (not the ignore index) are clamped", "ignore_index reduction", 2},
  });
}

} // namespace hexir::onnx_import

//===- ScatterOps.cpp - ONNX GatherND, ScatterElements, ScatterND, ReverseSequence ===//
//
// Reads and writes at run-time indices, each one linalg.generic over the output reading its
// sources with tensor.extract at clamped indices (a bad index never reads or writes outside a
// tensor). A scatter has no parallel form that writes: each output element instead looks
// through the updates that could land on it (a reduction loop over them), and takes the last
// one that does (reduction none: the reference's order) or combines them all (add, mul, max,
// min). That is O(output x updates along the scattered axes): cheap for the few rows a KV-cache
// update or a mask writes.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <functional>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Whether raw index `raw` (negative from the end) names position `at` (an index value) of an
// axis of `dim`.
Value names(OpBuilder &b, Location l, Value raw, Value at, int64_t dim) {
  Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), raw);
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, arith::ConstantIndexOp::create(b, l, 0));
  i = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, dim)), i);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, at);
}

FailureOr<std::string> readReduction(NodeContext &ctx) {
  std::string r = ctx.attrString("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && !(ctx.opset() >= 18 && (r == "max" || r == "min")))
    return ctx.error() << "reduction '" << r << "' is not one of none, add, mul" << (ctx.opset() >= 18 ? ", max, min" : "");
  return r;
}

Value combine(OpBuilder &b, Location l, const std::string &reduction, Value acc, Value v) {
  bool f = isa<FloatType>(acc.getType());
  if (reduction == "add")
    return addScalar(b, l, acc, v);
  if (reduction == "mul")
    return mulScalar(b, l, acc, v);
  if (reduction == "max")
    return f ? arith::MaximumFOp::create(b, l, acc, v).getResult() : arith::MaxSIOp::create(b, l, acc, v).getResult();
  if (reduction == "min")
    return f ? arith::MinimumFOp::create(b, l, acc, v).getResult() : arith::MinSIOp::create(b, l, acc, v).getResult();
  return v;
}

// A candidate update of a scatter, seen from an output element: whether it lands there, and its
// value. Block arguments and linalg.index dims are the output's, then the candidate loop's.
using Candidate = std::function<std::pair<Value, Value>(OpBuilder &, Location, Value candidate)>;

// `data` with every element replaced by the last of `count` candidate updates that lands on it
// (or combined with all of them by `reduction`): one linalg.generic over data's shape with a
// reduction loop over the candidates.
Value scatterInto(NodeContext &ctx, Value data, int64_t count, const std::string &reduction,
                  const Candidate &candidate) {
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, mc));
  // The candidate loop's extent comes from an operand of shape [count] (never read).
  Value span = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{count}, b.getI8Type());
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, mc)}, mc),
                                 AffineMap::get(rank + 1, 0, outExprs, mc)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, ctx.loc, TypeRange{data.getType()}, ValueRange{span}, ValueRange{data}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               auto [hit, v] = candidate(nb, nl, linalg::IndexOp::create(nb, nl, rank));
               linalg::YieldOp::create(
                   nb, nl, ValueRange{arith::SelectOp::create(nb, nl, hit, combine(nb, nl, reduction, a[1], v), a[1])});
             })
      .getResult(0);
}

LogicalResult requireIndices(NodeContext &ctx, const OnnxValue &indices) {
  if (indices.type != DType::kInt64 && indices.type != DType::kInt32)
    return ctx.error() << "indices must be an int64 or int32 tensor";
  return success();
}

// GatherND: out[b..., i..., j...] = data[b..., indices[b..., i..., :]..., j...].
LogicalResult convertGatherND(NodeContext &ctx) {
  const OnnxValue &data = ctx.input(0), &indices = ctx.input(1);
  if (failed(requireIndices(ctx, indices)))
    return failure();
  int64_t batch = ctx.attrInt("batch_dims", 0), r = data.rank(), q = indices.rank();
  if (q < 1 || batch < 0 || batch >= std::min(r, q))
    return ctx.error() << "batch_dims " << batch << " must be below the ranks of data (" << r << ") and indices (" << q
                       << ")";
  int64_t k = indices.shape.back();
  if (k < 1 || batch + k > r)
    return ctx.error() << "indices' last dimension " << k << " must be in [1, " << r - batch << "]";
  for (int64_t d = 0; d < batch; ++d)
    if (data.shape[d] != indices.shape[d])
      return ctx.error() << "the batch dimensions of data " << shapeString(data.shape) << " and indices "
                         << shapeString(indices.shape) << " differ";
  std::vector<int64_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), data.shape.begin() + batch + k, data.shape.end());
  for (int64_t d = batch; d < batch + k; ++d)
    if (data.shape[d] == 0)
      return ctx.error() << "gathers from the empty axis " << d;
  if (elementCount(shape) == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(data.type, shape)));
    return success();
  }
  Value dv = materialize(ctx, data), iv = materialize(ctx, indices);
  int64_t lead = q - 1;  // the output's dims that index `indices`
  Value out = generate(ctx, shape, data.type, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    SmallVector<Value> coords(at.begin(), at.begin() + batch);
    SmallVector<Value> icoords(at.begin(), at.begin() + lead);
    icoords.push_back(Value());
    for (int64_t t = 0; t < k; ++t) {
      icoords.back() = arith::ConstantIndexOp::create(b, l, t);
      Value raw = tensor::ExtractOp::create(b, l, iv, icoords);
      coords.push_back(gatherIndex(b, l, raw, data.shape[batch + t]));
    }
    coords.append(at.begin() + lead, at.end());
    return tensor::ExtractOp::create(b, l, dv, coords);
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, data.type));
  return success();
}

// ScatterElements (and Scatter, its opset 9-10 name that the version converter renames):
// out = data, then out[p with axis -> indices[p]] = updates[p] for every position p of indices.
LogicalResult convertScatterElements(NodeContext &ctx) {
  const OnnxValue &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
  if (failed(requireIndices(ctx, indices)))
    return failure();
  auto reduction = readReduction(ctx);
  if (failed(reduction))
    return failure();
  int64_t rank = data.rank();
  auto axisOr = ctx.axisAttr("axis", 0, rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (indices.shape != updates.shape || indices.rank() != rank)
    return ctx.error() << "indices " << shapeString(indices.shape) << " and updates " << shapeString(updates.shape)
                       << " must have one shape, of data's rank (" << rank << ")";
  if (updates.type != data.type)
    return ctx.error() << "updates must have data's element type";
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      return ctx.error() << "indices " << shapeString(indices.shape) << " reach past data " << shapeString(data.shape)
                         << " along axis " << d;
  if (indices.numElements() == 0) {
    ctx.setOutput(0, data);
    return success();
  }
  Value iv = materialize(ctx, indices), uv = materialize(ctx, updates);
  int64_t dim = data.shape[axis];
  // Candidate t: the update at p = (q with axis -> t), if q's other coordinates lie inside indices.
  Value out = scatterInto(ctx, materialize(ctx, data), indices.shape[axis], *reduction,
                          [&](OpBuilder &nb, Location nl, Value t) -> std::pair<Value, Value> {
                            Value inside = arith::ConstantIntOp::create(nb, nl, 1, 1);
                            SmallVector<Value> p;
                            for (int64_t d = 0; d < rank; ++d) {
                              if (d == axis) {
                                p.push_back(t);
                                continue;
                              }
                              Value q = linalg::IndexOp::create(nb, nl, d);
                              Value lim = arith::ConstantIndexOp::create(nb, nl, indices.shape[d]);
                              inside = arith::AndIOp::create(
                                  nb, nl, inside, arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, q, lim));
                              p.push_back(arith::MinUIOp::create(
                                  nb, nl, q, arith::ConstantIndexOp::create(nb, nl, indices.shape[d] - 1)));
                            }
                            Value raw = tensor::ExtractOp::create(nb, nl, iv, p);
                            Value hit = arith::AndIOp::create(
                                nb, nl, inside, names(nb, nl, raw, linalg::IndexOp::create(nb, nl, axis), dim));
                            return {hit, tensor::ExtractOp::create(nb, nl, uv, p)};
                          });
  ctx.setOutput(0, OnnxValue::ofValue(out, data.type));
  return success();
}

// ScatterND: out = data, then out[indices[u, :]..., j...] = updates[u..., j...] for every index
// tuple u.
LogicalResult convertScatterND(NodeContext &ctx) {
  const OnnxValue &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
  if (failed(requireIndices(ctx, indices)))
    return failure();
  auto reduction = readReduction(ctx);
  if (failed(reduction))
    return failure();
  int64_t r = data.rank(), q = indices.rank();
  if (q < 1)
    return ctx.error() << "indices must have rank 1 or more";
  int64_t k = indices.shape.back();
  if (k < 1 || k > r)
    return ctx.error() << "indices' last dimension " << k << " must be in [1, " << r << "]";
  std::vector<int64_t> expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected || updates.type != data.type)
    return ctx.error() << "updates " << shapeString(updates.shape) << " must have shape " << shapeString(expected)
                       << " and data's element type";
  int64_t count = elementCount(std::vector<int64_t>(indices.shape.begin(), indices.shape.end() - 1));
  if (count == 0) {
    ctx.setOutput(0, data);
    return success();
  }
  OpBuilder &b = ctx.b;
  // Indices as [U, k], updates as [U, j...].
  Value iv = reshapeView(b, ctx.loc, materialize(ctx, indices), {count, k});
  std::vector<int64_t> flatUpdates = {count};
  flatUpdates.insert(flatUpdates.end(), data.shape.begin() + k, data.shape.end());
  Value uv = reshapeView(b, ctx.loc, materialize(ctx, updates), flatUpdates);
  // Candidate u: index tuple u's update, where the tuple names this element's first k coordinates.
  Value out = scatterInto(ctx, materialize(ctx, data), count, *reduction,
                          [&](OpBuilder &nb, Location nl, Value u) -> std::pair<Value, Value> {
                            Value hit = arith::ConstantIntOp::create(nb, nl, 1, 1);
                            for (int64_t t = 0; t < k; ++t) {
                              Value raw = tensor::ExtractOp::create(
                                  nb, nl, iv, ValueRange{u, arith::ConstantIndexOp::create(nb, nl, t)});
                              hit = arith::AndIOp::create(
                                  nb, nl, hit, names(nb, nl, raw, linalg::IndexOp::create(nb, nl, t), data.shape[t]));
                            }
                            SmallVector<Value> coords = {u};
                            for (int64_t d = k; d < r; ++d)
                              coords.push_back(linalg::IndexOp::create(nb, nl, d));
                            return {hit, tensor::ExtractOp::create(nb, nl, uv, coords)};
                          });
  ctx.setOutput(0, OnnxValue::ofValue(out, data.type));
  return success();
}

// ReverseSequence: along time_axis, the first sequence_lens[b] elements of each batch row b
// reversed, the rest as they are.
LogicalResult convertReverseSequence(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0), &lens = ctx.input(1);
  if (failed(requireIndices(ctx, lens)))
    return failure();
  int64_t timeAxis = ctx.attrInt("time_axis", 0), batchAxis = ctx.attrInt("batch_axis", 1);
  if (x.rank() < 2 || timeAxis < 0 || timeAxis > 1 || batchAxis < 0 || batchAxis > 1 || timeAxis == batchAxis)
    return ctx.error() << "time_axis and batch_axis must be 0 and 1 (either way) of an input of rank 2 or more";
  if (lens.shape != std::vector<int64_t>{x.shape[batchAxis]})
    return ctx.error() << "sequence_lens must hold " << x.shape[batchAxis] << " values (one per batch row)";
  if (x.numElements() == 0) {
    ctx.setOutput(0, x);
    return success();
  }
  Value xv = materialize(ctx, x), lv = materialize(ctx, lens);
  int64_t steps = x.shape[timeAxis];
  Value out = generate(ctx, x.shape, x.type, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    Value raw = tensor::ExtractOp::create(b, l, lv, ValueRange{at[batchAxis]});
    // The length clamped into [0, steps].
    Value len = arith::IndexCastOp::create(b, l, b.getIndexType(), raw);
    len = arith::MaxSIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, 0));
    len = arith::MinSIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, steps));
    Value t = at[timeAxis];
    Value reversed = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, len);
    Value mirror = arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, 1)), t);
    SmallVector<Value> coords(at.begin(), at.end());
    coords[timeAxis] = arith::SelectOp::create(b, l, reversed, mirror, t);
    return tensor::ExtractOp::create(b, l, xv, coords);
  });
  ctx.setOutput(0, OnnxValue::ofValue(out, x.type));
  return success();
}

} // namespace

void addScatterOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"GatherND", 13, 21, convertGatherND, "out-of-range run-time indices are clamped", "batch_dims", 2, nullptr, true},
      {"ReverseSequence", 13, 21, convertReverseSequence, "", "batch_axis time_axis", 2, nullptr, true},
      {"ScatterElements", 13, 21, convertScatterElements, "O(output x updates along the axis)", "axis reduction", 3,
       nullptr, true},
      {"ScatterND", 13, 21, convertScatterND, "O(output x index tuples)", "reduction", 3, nullptr, true},
  });
}

} // namespace hexir::onnx_import

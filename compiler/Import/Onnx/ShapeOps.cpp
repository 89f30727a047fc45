//===- ShapeOps.cpp - ONNX data movement and shape ops --------------------===//
//
// Reshape, Flatten, Squeeze and Unsqueeze are views; Shape, Size, ConstantOfShape and Range
// are constants; on constant inputs every op here folds, which is how shape computations
// (Shape -> Gather -> Concat -> Reshape, Split sizes) disappear at import.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace hexir::onnx_import {
namespace {

LogicalResult setReshaped(NodeContext &ctx, const OnnxValue &x, std::vector<int64_t> shape) {
  ctx.setOutput(0, reshaped(ctx, x, std::move(shape)));
  return success();
}

LogicalResult convertReshape(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto target = ctx.requireConstant(1, "shape");
  if (failed(target))
    return failure();
  bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  std::vector<int64_t> shape = target->ints();
  int64_t known = 1, inferred = -1;
  bool overflow = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowZero) {
      if (d >= x.shape.size())
        return ctx.error() << "shape " << shapeString(shape) << " copies dimension " << d
                           << " of a rank-" << x.rank() << " input";
      shape[d] = x.shape[d];
    }
    if (shape[d] == -1) {
      if (inferred >= 0)
        return ctx.error() << "shape has more than one -1";
      inferred = d;
    } else if (shape[d] < 0) {
      return ctx.error() << "shape has a negative dimension " << shape[d];
    } else {
      overflow |= __builtin_mul_overflow(known, shape[d], &known);
    }
  }
  if (overflow)
    return ctx.error() << "shape " << shapeString(shape) << " has more elements than fit in 64 bits";
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known != 0)
      return ctx.error() << "cannot reshape " << shapeString(x.shape) << " (" << x.numElements() << " elements) into "
                         << shapeString(shape) << ": the other dimensions hold " << known
                         << " elements, which do not divide " << x.numElements();
    shape[inferred] = x.numElements() / known;
  }
  int64_t n = 1;
  for (int64_t d : shape)
    overflow |= __builtin_mul_overflow(n, d, &n);
  if (overflow || n != x.numElements())
    return ctx.error() << "cannot reshape " << shapeString(x.shape) << " (" << x.numElements()
                       << " elements) into " << shapeString(shape);
  return setReshaped(ctx, x, shape);
}

LogicalResult convertFlatten(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += x.rank();
  if (axis < 0 || axis > x.rank())
    return ctx.error() << "axis " << ctx.attrInt("axis", 1) << " is out of range for rank " << x.rank();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x.shape[d];
  return setReshaped(ctx, x, {outer, x.numElements() / std::max<int64_t>(outer, 1)});
}

FailureOr<std::vector<int64_t>> axesInput(NodeContext &ctx, size_t index, const char *attrName) {
  if (ctx.hasInput(index)) {
    auto t = ctx.requireConstant(index, "axes");
    if (failed(t))
      return failure();
    return t->ints();
  }
  return ctx.attrInts(attrName);
}

LogicalResult convertSqueeze(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto axes = axesInput(ctx, 1, "axes");
  if (failed(axes))
    return failure();
  std::vector<bool> drop(x.rank(), false);
  if (axes->empty()) {
    for (int64_t d = 0; d < x.rank(); ++d)
      drop[d] = x.shape[d] == 1;
  }
  for (int64_t a : *axes) {
    if (!normalizeAxis(a, x.rank()) || x.shape[a] != 1)
      return ctx.error() << "cannot squeeze axis " << a << " of shape " << shapeString(x.shape);
    drop[a] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!drop[d])
      shape.push_back(x.shape[d]);
  return setReshaped(ctx, x, shape);
}

LogicalResult convertUnsqueeze(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto axes = axesInput(ctx, 1, "axes");
  if (failed(axes))
    return failure();
  int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    if (!normalizeAxis(a, rank) || inserted[a])
      return ctx.error() << "invalid unsqueeze axis " << a << " for output rank " << rank;
    inserted[a] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : x.shape[next++]);
  return setReshaped(ctx, x, shape);
}

LogicalResult convertTranspose(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  std::vector<int64_t> perm = ctx.attrInts("perm");
  if (perm.empty())
    for (int64_t d = x.rank() - 1; d >= 0; --d)
      perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d = 0; d < static_cast<int64_t>(sorted.size()); ++d)
    if (sorted[d] != d || static_cast<int64_t>(perm.size()) != x.rank())
      return ctx.error() << "perm is not a permutation of the input's " << x.rank() << " dimensions";
  if (x.isConstant()) {
    ctx.setOutput(0, OnnxValue::ofConstant(transpose(*x.constant, perm)));
    return success();
  }
  ctx.setOutput(0, OnnxValue::ofValue(transposeValue(ctx.b, ctx.loc, x.value, perm), x.type));
  return success();
}

LogicalResult convertConcat(NodeContext &ctx) {
  const OnnxValue &first = ctx.input(0);
  auto axisOr = ctx.axisAttr("axis", 0, first.rank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  bool allConstant = true;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const OnnxValue &v = ctx.input(i);
    if (v.rank() != first.rank() || v.type != first.type)
      return ctx.error() << "input " << i << " differs in rank or element type from input 0";
    for (int64_t d = 0; d < v.rank(); ++d)
      if (d != axis && v.shape[d] != first.shape[d])
        return ctx.error() << "input " << i << " has shape " << shapeString(v.shape) << " and input 0 "
                           << shapeString(first.shape) << ": they differ at axis " << d << " (" << v.shape[d]
                           << " vs " << first.shape[d] << "), and only axis " << axis << " (the concat axis) may";
    allConstant &= v.isConstant();
  }
  if (allConstant) {
    std::vector<const HostTensor *> hosts;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      hosts.push_back(&*ctx.input(i).constant);
    ctx.setOutput(0, OnnxValue::ofConstant(concat(hosts, axis)));
    return success();
  }
  SmallVector<Value> values;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.input(i).shape[axis] > 0)
      values.push_back(materialize(ctx, ctx.input(i)));
  if (values.empty()) {  // every input empty along the axis (a loop body's carried [0] tensors)
    std::vector<int64_t> shape = first.shape;
    shape[axis] = 0;
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(first.type, shape)));
    return success();
  }
  Value out = values.size() == 1 ? values[0]
                                 : tensor::ConcatOp::create(ctx.b, ctx.loc, axis, values).getResult();
  ctx.setOutput(0, OnnxValue::ofValue(out, first.type));
  return success();
}

// A strided slice of `x` (steps may be negative): folded, the input itself, a
// tensor.extract_slice, or for negative steps a copy whose input map walks backwards.
OnnxValue sliceOf(NodeContext &ctx, const OnnxValue &x, const std::vector<int64_t> &starts,
                  const std::vector<int64_t> &counts, const std::vector<int64_t> &steps) {
  if (x.isConstant())
    return OnnxValue::ofConstant(slice(*x.constant, starts, counts, steps));
  OpBuilder &b = ctx.b;
  if (counts == x.shape && llvm::all_of(steps, [](int64_t s) { return s == 1; }))
    return x;
  auto type = tensorType(b.getContext(), counts, x.type);
  if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
    Value out = tensor::ExtractSliceOp::create(b, ctx.loc, type, x.value,
                                               getAsIndexOpFoldResult(b.getContext(), starts),
                                               getAsIndexOpFoldResult(b.getContext(), counts),
                                               getAsIndexOpFoldResult(b.getContext(), steps));
    return OnnxValue::ofValue(out, x.type);
  }
  // Negative steps: the same elements in increasing order (a strided slice starting at the last
  // one taken), then a copy reversing those axes. Each step reads an input of exactly its loop
  // ranges, which linalg's verifier requires.
  MLIRContext *mc = b.getContext();
  int64_t rank = x.rank();
  std::vector<int64_t> lowest = starts, strides = steps;
  for (int64_t d = 0; d < rank; ++d)
    if (steps[d] < 0) {
      lowest[d] = starts[d] + (counts[d] - 1) * steps[d];
      strides[d] = -steps[d];
    }
  Value increasing = tensor::ExtractSliceOp::create(b, ctx.loc, type, x.value, getAsIndexOpFoldResult(mc, lowest),
                                                    getAsIndexOpFoldResult(mc, counts),
                                                    getAsIndexOpFoldResult(mc, strides));
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(steps[d] < 0 ? counts[d] - 1 - getAffineDimExpr(d, mc) : getAffineDimExpr(d, mc));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, mc),
                                 AffineMap::getMultiDimIdentityMap(rank, mc)};
  Value init = tensor::EmptyOp::create(b, ctx.loc, counts, type.getElementType());
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(b, ctx.loc, TypeRange{type}, ValueRange{increasing}, ValueRange{init},
                                        maps, iterators, [](OpBuilder &nb, Location nl, ValueRange a) {
                                          linalg::YieldOp::create(nb, nl, a[0]);
                                        });
  return OnnxValue::ofValue(copy.getResult(0), x.type);
}

LogicalResult convertSlice(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto startsT = ctx.requireConstant(1, "starts");
  auto endsT = ctx.requireConstant(2, "ends");
  if (failed(startsT) || failed(endsT))
    return failure();
  std::vector<int64_t> startsIn = startsT->ints(), endsIn = endsT->ints(), axes, stepsIn;
  if (ctx.hasInput(3)) {
    auto t = ctx.requireConstant(3, "axes");
    if (failed(t))
      return failure();
    axes = t->ints();
  } else {
    for (size_t k = 0; k < startsIn.size(); ++k)
      axes.push_back(k);
  }
  if (ctx.hasInput(4)) {
    auto t = ctx.requireConstant(4, "steps");
    if (failed(t))
      return failure();
    stepsIn = t->ints();
  } else {
    stepsIn.assign(startsIn.size(), 1);
  }
  if (endsIn.size() != startsIn.size() || axes.size() != startsIn.size() || stepsIn.size() != startsIn.size())
    return ctx.error() << "starts, ends, axes and steps must have the same length";
  std::vector<int64_t> starts(x.rank(), 0), counts = x.shape, steps(x.rank(), 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!normalizeAxis(a, x.rank()))
      return ctx.error() << "axis " << axes[k] << " is out of range for rank " << x.rank();
    int64_t dim = x.shape[a], step = stepsIn[k];
    if (step == 0)
      return ctx.error() << "step 0 on axis " << axes[k];
    // ONNX's clamping rules (those of numpy slices).
    int64_t s = startsIn[k], e = endsIn[k];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (step > 0 || dim == 0) {
      // (An empty axis with a negative step would clamp into [0, -1]: std::clamp's precondition
      // fails. Every slice of an empty axis is empty.)
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (dim == 0)
        e = s;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    // s and e now lie in [-1, dim]; the step may be as large as INT64_MIN, whose magnitude
    // only fits unsigned.
    int64_t distance = step > 0 ? e - s : s - e;
    uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
    int64_t count = distance <= 0 ? 0 : 1 + static_cast<int64_t>(static_cast<uint64_t>(distance - 1) / magnitude);
    // An empty or single-element slice starts at 0 or s with step 1 (its step is meaningless).
    starts[a] = count == 0 ? 0 : s;
    counts[a] = count;
    steps[a] = count <= 1 ? 1 : step;
  }
  ctx.setOutput(0, sliceOf(ctx, x, starts, counts, steps));
  return success();
}

LogicalResult convertSplit(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto axisOr = ctx.axisAttr("axis", 0, x.rank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  std::vector<int64_t> sizes;
  if (ctx.hasInput(1)) {
    auto t = ctx.requireConstant(1, "split");
    if (failed(t))
      return failure();
    sizes = t->ints();
  } else {
    int64_t n = static_cast<int64_t>(ctx.numOutputs());
    // Opset 18 names the count; the parts are as before: equal, but the last may be smaller.
    if (ctx.attr("num_outputs") != nullptr && ctx.attrInt("num_outputs", 0) != n)
      return ctx.error() << "num_outputs is " << ctx.attrInt("num_outputs", 0) << " but the node has " << n
                         << " outputs";
    int64_t part = (x.shape[axis] + n - 1) / n;  // the last part may be smaller
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(part, x.shape[axis] - k * part)));
  }
  int64_t total = 0;
  bool overflow = false;
  for (int64_t size : sizes) {
    if (size < 0)
      return ctx.error() << "split sizes must not be negative";
    overflow |= __builtin_add_overflow(total, size, &total);
  }
  if (sizes.size() != ctx.numOutputs() || overflow || total != x.shape[axis])
    return ctx.error() << "split sizes do not cover axis " << axis << " of " << shapeString(x.shape)
                       << " with " << ctx.numOutputs() << " outputs";
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> starts(x.rank(), 0), counts = x.shape, steps(x.rank(), 1);
    starts[axis] = offset;
    counts[axis] = sizes[k];
    offset += sizes[k];
    if (ctx.hasOutput(k))
      ctx.setOutput(k, sliceOf(ctx, x, starts, counts, steps));
  }
  return success();
}

// Gather's and GatherElements' shared checks: the axis, integer indices, and constant indices
// inside the axis (run-time ones are clamped by gatherIndex). The normalized axis.
FailureOr<int64_t> gatherAxis(NodeContext &ctx, const OnnxValue &data, const OnnxValue &indices) {
  auto axis = ctx.axisAttr("axis", 0, data.rank());
  if (failed(axis))
    return failure();
  if (isFloat(indices.type))
    return ctx.error() << "indices must be an integer tensor";
  int64_t dim = data.shape[*axis];
  if (indices.isConstant())
    for (int64_t v : indices.constant->ints())
      if (v < -dim || v >= dim)
        return ctx.error() << "index " << v << " is out of range for axis " << *axis << " of size " << dim;
  return axis;
}

LogicalResult convertGather(NodeContext &ctx) {
  const OnnxValue &data = ctx.input(0);
  const OnnxValue &indices = ctx.input(1);
  auto axisOr = gatherAxis(ctx, data, indices);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  int64_t dim = data.shape[axis];
  if (indices.isConstant()) {
    if (data.isConstant() && foldable(gatheredShape(data.shape, indices.shape, axis))) {  // (else gathered at run time)
      ctx.setOutput(0, OnnxValue::ofConstant(gather(*data.constant, *indices.constant, axis)));
      return success();
    }
    // A constant scalar index is a slice and a view.
    if (indices.rank() == 0) {
      std::vector<int64_t> starts(data.rank(), 0), counts = data.shape, steps(data.rank(), 1);
      int64_t i = indices.constant->asInt(0);
      starts[axis] = i < 0 ? i + dim : i;
      counts[axis] = 1;
      std::vector<int64_t> shape = data.shape;
      shape.erase(shape.begin() + axis);
      ctx.setOutput(0, reshaped(ctx, sliceOf(ctx, data, starts, counts, steps), shape));
      return success();
    }
  }
  if (dim == 0)
    return ctx.error() << "gathers from an empty axis";
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value dataV = materialize(ctx, data);
  Value indicesV = materialize(ctx, indices);
  std::vector<int64_t> outShape(data.shape.begin(), data.shape.begin() + axis);
  outShape.insert(outShape.end(), indices.shape.begin(), indices.shape.end());
  outShape.insert(outShape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t rank = outShape.size(), ir = indices.rank();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < ir; ++d)
    idxExprs.push_back(getAffineDimExpr(axis + d, mc));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idxExprs, mc),
                                 AffineMap::getMultiDimIdentityMap(rank, mc)};
  Value init = tensor::EmptyOp::create(b, ctx.loc, outShape, elementType(mc, data.type));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{indicesV}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < axis; ++d)
          coords.push_back(linalg::IndexOp::create(nb, nl, d));
        coords.push_back(gatherIndex(nb, nl, a[0], dim));
        for (int64_t d = axis + 1; d < data.rank(); ++d)
          coords.push_back(linalg::IndexOp::create(nb, nl, d - 1 + ir));
        linalg::YieldOp::create(nb, nl, tensor::ExtractOp::create(nb, nl, dataV, coords).getResult());
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), data.type));
  return success();
}

// GatherElements: out[i] = data[i with axis coordinate idx[i]]; out has the indices' shape.
// Run-time indices are clamped to the axis as Gather's are (no read outside the tensor).
LogicalResult convertGatherElements(NodeContext &ctx) {
  const OnnxValue &data = ctx.input(0);
  const OnnxValue &indices = ctx.input(1);
  auto axisOr = gatherAxis(ctx, data, indices);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (indices.rank() != data.rank())
    return ctx.error() << "indices " << shapeString(indices.shape) << " must have the rank of data "
                       << shapeString(data.shape);
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      return ctx.error() << "indices " << shapeString(indices.shape) << " reach past data "
                         << shapeString(data.shape) << " along axis " << d;
  int64_t dim = data.shape[axis];
  if (indices.numElements() == 0) {
    ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::zeros(data.type, indices.shape)));
    return success();
  }
  if (dim == 0)
    return ctx.error() << "gathers from an empty axis";
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value dataV = materialize(ctx, data);
  Value indicesV = materialize(ctx, indices);
  int64_t rank = data.rank();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, mc),
                                 AffineMap::getMultiDimIdentityMap(rank, mc)};
  Value init = tensor::EmptyOp::create(b, ctx.loc, indices.shape, elementType(mc, data.type));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{indicesV}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(d == axis ? gatherIndex(nb, nl, a[0], dim) : linalg::IndexOp::create(nb, nl, d).getResult());
        linalg::YieldOp::create(nb, nl, tensor::ExtractOp::create(nb, nl, dataV, coords).getResult());
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), data.type));
  return success();
}

// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape (views but the transpose).
LogicalResult rearrange(NodeContext &ctx, const std::vector<int64_t> &split, const std::vector<int64_t> &perm,
                        const std::vector<int64_t> &out) {
  const OnnxValue &x = ctx.input(0);
  OnnxValue parts = reshaped(ctx, x, split);
  OnnxValue moved = parts.isConstant() ? OnnxValue::ofConstant(transpose(*parts.constant, perm))
                                       : OnnxValue::ofValue(transposeValue(ctx.b, ctx.loc, parts.value, perm), x.type);
  ctx.setOutput(0, reshaped(ctx, moved, out));
  return success();
}
LogicalResult convertDepthToSpace(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  int64_t bs = ctx.attrInt("blocksize", 0);
  std::string mode = ctx.attrString("mode", "DCR");
  if (x.rank() != 4)
    return ctx.error() << "input must have rank 4 (N, C, H, W), got " << shapeString(x.shape);
  if (bs <= 0 || bs > (int64_t{1} << 15) || x.shape[1] % (bs * bs) != 0)
    return ctx.error() << "blocksize " << bs << " must be positive and its square divide the " << x.shape[1]
                       << " channels";
  if (mode != "DCR" && mode != "CRD")
    return ctx.error() << "mode must be DCR or CRD, got '" << mode << "'";
  int64_t n = x.shape[0], c = x.shape[1] / (bs * bs), h = x.shape[2], w = x.shape[3];
  if (mode == "DCR")
    return rearrange(ctx, {n, bs, bs, c, h, w}, {0, 3, 4, 1, 5, 2}, {n, c, h * bs, w * bs});
  return rearrange(ctx, {n, c, bs, bs, h, w}, {0, 1, 4, 2, 5, 3}, {n, c, h * bs, w * bs});
}
LogicalResult convertSpaceToDepth(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  int64_t bs = ctx.attrInt("blocksize", 0);
  if (x.rank() != 4)
    return ctx.error() << "input must have rank 4 (N, C, H, W), got " << shapeString(x.shape);
  if (bs <= 0 || bs > (int64_t{1} << 15) || x.shape[2] % bs != 0 || x.shape[3] % bs != 0)
    return ctx.error() << "blocksize " << bs << " must be positive and divide height " << x.shape[2] << " and width "
                       << x.shape[3];
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2] / bs, w = x.shape[3] / bs;
  return rearrange(ctx, {n, c, h, bs, w, bs}, {0, 3, 5, 1, 2, 4}, {n, c * bs * bs, h, w});
}

LogicalResult convertExpand(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  auto shapeT = ctx.requireConstant(1, "shape");
  if (failed(shapeT))
    return failure();
  std::vector<int64_t> shape;
  for (int64_t d : shapeT->ints())
    if (d < 0)
      return ctx.error() << "shape has a negative dimension";
  if (!broadcastShapes(x.shape, shapeT->ints(), shape))
    return ctx.error() << "cannot expand " << shapeString(x.shape) << " to " << shapeString(shapeT->ints());
  if (x.isConstant() && foldable(shape)) {
    ctx.setOutput(0, OnnxValue::ofConstant(expand(*x.constant, shape)));
    return success();
  }
  if (x.isSplat() && !foldable(shape)) {  // a fill of the constant pool at load
    ctx.setOutput(0, OnnxValue::ofValue(splatConstant(ctx.b, ctx.loc, x.type, shape, *x.constant, 0), x.type));
    return success();
  }
  ctx.setOutput(0, OnnxValue::ofValue(broadcastTo(ctx, x, shape), x.type));
  return success();
}

LogicalResult convertShape(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  int64_t rank = x.rank();
  int64_t start = ctx.attrInt("start", 0), end = ctx.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(x.shape.begin() + start, x.shape.begin() + end);
  int64_t n = dims.size();
  ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::fromInts(dims, {n})));
  return success();
}

LogicalResult convertSize(NodeContext &ctx) {
  ctx.setOutput(0, OnnxValue::ofConstant(HostTensor::fromInts({ctx.input(0).numElements()}, {})));
  return success();
}

LogicalResult convertConstant(NodeContext &ctx) {
  const onnx::NodeProto &node = ctx.node();
  if (node.attribute_size() != 1)
    return ctx.error() << "expects exactly one attribute";
  const onnx::AttributeProto &a = node.attribute(0);
  HostTensor t;
  if (a.name() == "value") {
    std::string error;
    auto read = readTensor(a.t(), "", error);
    if (failed(read))
      return ctx.error() << error;
    t = *read;
  } else if (a.name() == "value_float") {
    t = HostTensor::scalarFloat(a.f());
  } else if (a.name() == "value_floats") {
    t.f.assign(a.floats().begin(), a.floats().end());
    t.shape = {static_cast<int64_t>(t.f.size())};
  } else if (a.name() == "value_int") {
    t = HostTensor::fromInts({a.i()}, {});
  } else if (a.name() == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    t = HostTensor::fromInts(v, {static_cast<int64_t>(v.size())});
  } else {
    return ctx.error() << "unsupported attribute '" << a.name() << "'";
  }
  ctx.setOutput(0, OnnxValue::ofConstant(std::move(t)));
  return success();
}

LogicalResult convertConstantOfShape(NodeContext &ctx) {
  auto shapeT = ctx.requireConstant(0, "shape");
  if (failed(shapeT))
    return failure();
  std::vector<int64_t> shape = shapeT->ints();
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > kMaxFoldedElements / d))
      return ctx.error() << "shape " << shapeString(shape) << " is negative or too large";
    count *= d;
  }
  HostTensor value = HostTensor::scalarFloat(0.0f);
  if (const auto *a = ctx.attr("value")) {
    std::string error;
    auto read = readTensor(a->t(), "", error);
    if (failed(read))
      return ctx.error() << error;
    if (read->numElements() != 1)
      return ctx.error() << "value must hold one element";
    value = *read;
  }
  value.shape = {};
  ctx.setOutput(0, OnnxValue::ofConstant(expand(value, shape)));
  return success();
}

LogicalResult convertRange(NodeContext &ctx) {
  auto start = ctx.requireScalar(0, "start"), limit = ctx.requireScalar(1, "limit"),
       delta = ctx.requireScalar(2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (limit->type != start->type || delta->type != start->type)
    return ctx.error() << "start, limit and delta must have one type, got " << dtypeName(start->type) << ", "
                       << dtypeName(limit->type) << " and " << dtypeName(delta->type);
  double s = start->asDouble(0), l = limit->asDouble(0), d = delta->asDouble(0);
  if (d == 0)
    return ctx.error() << "delta is 0";
  int64_t n = 0;
  if (isFloat(start->type)) {
    double steps = std::ceil((l - s) / d);
    if (!(steps <= static_cast<double>(kMaxFoldedElements)))
      return ctx.error() << "the range has too many elements";
    n = steps > 0 ? static_cast<int64_t>(steps) : 0;
  } else {
    // Exactly, in 128 bits: doubles round large int64 bounds, and limit - start may not fit
    // 64 bits. Every value lies between start and limit, so it fits int64.
    __int128 span = static_cast<__int128>(limit->asInt(0)) - start->asInt(0), step = delta->asInt(0);
    __int128 count = span / step + (span % step != 0 && (span > 0) == (step > 0) ? 1 : 0);
    if (count > kMaxFoldedElements)
      return ctx.error() << "the range has too many elements";
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  HostTensor t = HostTensor::zeros(start->type, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (isFloat(t.type))
      t.f[k] = static_cast<float>(s + k * d);
    else
      t.i[k] = static_cast<int64_t>(start->asInt(0) + static_cast<__int128>(k) * delta->asInt(0));
  }
  ctx.setOutput(0, OnnxValue::ofConstant(std::move(t)));
  return success();
}

LogicalResult convertTrilu(NodeContext &ctx) {
  auto x = ctx.requireConstant(0, "input");
  if (failed(x))
    return failure();
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto kt = ctx.requireScalar(1, "k");
    if (failed(kt))
      return failure();
    k = kt->asInt(0);
  }
  if (x->shape.size() < 2)
    return ctx.error() << "input must have rank 2 or more";
  bool upper = ctx.attrInt("upper", 1) != 0;
  HostTensor t = *x;
  int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
  for (int64_t e = 0; e < t.numElements(); ++e) {
    int64_t c = e % cols, r = (e / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (!keep) {
      if (isFloat(t.type))
        t.f[e] = 0;
      else
        t.i[e] = 0;
    }
  }
  ctx.setOutput(0, OnnxValue::ofConstant(std::move(t)));
  return success();
}

LogicalResult convertIdentity(NodeContext &ctx) {
  ctx.setOutput(0, ctx.input(0));
  return success();
}

LogicalResult convertDropout(NodeContext &ctx) {
  if (ctx.hasInput(2)) {
    auto training = ctx.requireScalar(2, "training_mode");
    if (failed(training))
      return failure();
    // Training with a ratio of 0 drops nothing: the identity, as in inference (exporters write
    // such Dropouts for attention probabilities, Swin's among them).
    if (training->asInt(0) != 0) {
      if (!ctx.hasInput(1))
        return ctx.error() << "training_mode is true with the default ratio 0.5; Hexir compiles inference graphs";
      auto ratio = ctx.requireScalar(1, "ratio");
      if (failed(ratio))
        return failure();
      if (ratio->asDouble(0) != 0)
        return ctx.error() << "training_mode is true with ratio " << ratio->asDouble(0)
                           << "; Hexir compiles inference graphs (export in eval mode)";
    }
  }
  ctx.setOutput(0, ctx.input(0));
  if (ctx.hasOutput(1)) {  // the mask keeps everything in inference
    const std::vector<int64_t> &shape = ctx.input(0).shape;
    if (!foldable(shape)) {  // too large to build here: a fill of the constant pool at load
      HostTensor one = HostTensor::fromInts({1}, {}, DType::kBool);
      ctx.setOutput(1, OnnxValue::ofValue(splatConstant(ctx.b, ctx.loc, DType::kBool, shape, one, 0), DType::kBool));
      return success();
    }
    HostTensor ones = HostTensor::zeros(DType::kBool, ctx.input(0).shape);
    std::fill(ones.i.begin(), ones.i.end(), 1);
    ctx.setOutput(1, OnnxValue::ofConstant(std::move(ones)));
  }
  return success();
}

} // namespace

void addShapeOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Concat", 13, 21, convertConcat, "", "axis", -1, nullptr, true},
      {"Constant", 13, 21, convertConstant, "no sparse_value", "value value_float value_floats value_int value_ints", 0},
      {"ConstantOfShape", 13, 21, convertConstantOfShape, "", "value", 1},
      {"DepthToSpace", 13, 21, convertDepthToSpace, "", "blocksize mode", 1, nullptr, true},
      {"Dropout", 13, 21, convertDropout, "inference only", "seed", 1},
      {"Expand", 13, 21, convertExpand, "shape known at compile time", "", 2, nullptr, true},
      {"Flatten", 13, 21, convertFlatten, "", "axis", 1, nullptr, true},
      {"Gather", 13, 21, convertGather, "out-of-range run-time indices are clamped", "axis", 2, nullptr, true},
      {"GatherElements", 13, 21, convertGatherElements, "out-of-range run-time indices are clamped", "axis", 2, nullptr, true},
      {"Identity", 13, 21, convertIdentity, "", "", 1, nullptr, true},
      {"Range", 13, 21, convertRange, "inputs known at compile time", "", 3},
      {"Reshape", 13, 21, convertReshape, "shape known at compile time", "allowzero", 2, nullptr, true},
      {"Shape", 13, 21, convertShape, "", "start end", 1, nullptr, true},
      {"Size", 13, 21, convertSize, "", "", 1, nullptr, true},
      {"SpaceToDepth", 13, 21, convertSpaceToDepth, "", "blocksize", 1, nullptr, true},
      {"Slice", 13, 21, convertSlice, "starts, ends, axes, steps known at compile time", "", 3, nullptr, true},
      {"Split", 13, 21, convertSplit, "split sizes known at compile time", "axis num_outputs", 1, nullptr, true},
      {"Squeeze", 13, 21, convertSqueeze, "axes known at compile time", "", 1, nullptr, true},
      {"Transpose", 13, 21, convertTranspose, "", "perm", 1, nullptr, true},
      {"Trilu", 14, 21, convertTrilu, "inputs known at compile time", "upper", 1},
      {"Unsqueeze", 13, 21, convertUnsqueeze, "axes known at compile time", "", 2, nullptr, true},
  });
}

} // namespace hexir::onnx_import

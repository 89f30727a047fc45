//===- Emit.cpp - building linalg/tensor IR for ONNX ops ------------------===//
#include "Import/Onnx/Emit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

using namespace mlir;

namespace hexir::onnx_import {

Type elementType(MLIRContext *ctx, DType type) {
  switch (type) {
  case DType::kFloat: return Float32Type::get(ctx);
  case DType::kInt64: return IntegerType::get(ctx, 64);
  case DType::kInt32: return IntegerType::get(ctx, 32);
  case DType::kBool: return IntegerType::get(ctx, 8);  // 0 or 1 in a byte, as numpy's bool
  case DType::kInt8:
  case DType::kUInt8: return IntegerType::get(ctx, 8);  // the same bits; converters keep the sign
  case DType::kInt16:
  case DType::kUInt16: return IntegerType::get(ctx, 16);
  case DType::kUInt32: return IntegerType::get(ctx, 32);
  case DType::kUInt64: return IntegerType::get(ctx, 64);
  }
  return {};
}

RankedTensorType tensorType(MLIRContext *ctx, ArrayRef<int64_t> shape, DType type) {
  return RankedTensorType::get(shape, elementType(ctx, type));
}

std::vector<int64_t> shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank;
}

Value constantTensor(OpBuilder &b, Location loc, const HostTensor &t) {
  RankedTensorType type = tensorType(b.getContext(), t.shape, t.type);
  DenseElementsAttr attr;
  switch (t.type) {
  case DType::kFloat:
    attr = DenseElementsAttr::get(type, ArrayRef<float>(t.f));
    break;
  case DType::kInt64:
  case DType::kUInt64:
    attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(t.i));
    break;
  case DType::kInt32:
  case DType::kUInt32: {
    std::vector<int32_t> v(t.i.size());
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<int32_t>(static_cast<uint32_t>(t.i[k]));  // the bits
    attr = DenseElementsAttr::get(type, ArrayRef<int32_t>(v));
    break;
  }
  case DType::kInt16:
  case DType::kUInt16: {
    std::vector<int16_t> v(t.i.size());
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<int16_t>(static_cast<uint16_t>(t.i[k]));
    attr = DenseElementsAttr::get(type, ArrayRef<int16_t>(v));
    break;
  }
  case DType::kBool: {
    std::vector<int8_t> v(t.i.size());
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = t.i[k] != 0;
    attr = DenseElementsAttr::get(type, ArrayRef<int8_t>(v));
    break;
  }
  case DType::kInt8:
  case DType::kUInt8: {
    std::vector<int8_t> v(t.i.size());
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<int8_t>(static_cast<uint8_t>(t.i[k]));  // uint8 255 is the byte 0xff
    attr = DenseElementsAttr::get(type, ArrayRef<int8_t>(v));
    break;
  }
  }
  return arith::ConstantOp::create(b, loc, type, attr);
}

namespace {

TypedAttr intAttr(OpBuilder &b, Type et, int64_t v) {
  // The bits of the type's width (uint8 255 is the byte 0xff), as a signed value of that width.
  switch (et.getIntOrFloatBitWidth()) {
  case 8: v = static_cast<int8_t>(static_cast<uint8_t>(v)); break;
  case 16: v = static_cast<int16_t>(static_cast<uint16_t>(v)); break;
  case 32: v = static_cast<int32_t>(static_cast<uint32_t>(v)); break;
  default: break;
  }
  return b.getIntegerAttr(et, v);
}

// Element `k` of `t` as an attribute of `type`'s element type.
TypedAttr elementAttr(OpBuilder &b, DType type, const HostTensor &t, int64_t k) {
  Type et = elementType(b.getContext(), type);
  if (isFloat(type))
    return b.getFloatAttr(et, t.asDouble(k));
  return intAttr(b, et, t.asInt(k));  // (a float: NaN and out of range are INT64_MIN, floatToInt)
}

} // namespace

Value scalarConstant(OpBuilder &b, Location loc, DType type, double value) {
  Type et = elementType(b.getContext(), type);
  if (isFloat(type))
    return arith::ConstantOp::create(b, loc, et, b.getFloatAttr(et, value));
  return arith::ConstantOp::create(b, loc, et, intAttr(b, et, floatToInt(value)));
}

Value elementConstant(OpBuilder &b, Location loc, DType type, const HostTensor &t, int64_t k) {
  TypedAttr element = elementAttr(b, type, t, k);
  return arith::ConstantOp::create(b, loc, element.getType(), element);
}

Value splatConstant(OpBuilder &b, Location loc, DType type, ArrayRef<int64_t> shape, const HostTensor &t, int64_t k) {
  RankedTensorType tensor = tensorType(b.getContext(), shape, type);
  return arith::ConstantOp::create(b, loc, tensor, DenseElementsAttr::get(tensor, elementAttr(b, type, t, k)));
}

Value floatConst(OpBuilder &b, Location loc, double v) { return scalarConstant(b, loc, DType::kFloat, v); }

Value materialize(NodeContext &ctx, const OnnxValue &v) {
  if (v.value)
    return v.value;
  return constantTensor(ctx.b, ctx.loc, *v.constant);
}

Value reshapeView(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  Type et = type.getElementType();
  int64_t rank = type.getRank();
  auto all = [](int64_t n) {
    ReassociationIndices r;
    for (int64_t k = 0; k < n; ++k)
      r.push_back(k);
    return r;
  };
  if (rank == 0)
    return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, et), v,
                                         ArrayRef<ReassociationIndices>{});
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get(shape, et), v,
                                           ArrayRef<ReassociationIndices>{});
  Value flat = v;
  if (rank != 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({type.getNumElements()}, et), v,
        ArrayRef<ReassociationIndices>{all(rank)});
  if (shape.size() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, et), flat,
                                       ArrayRef<ReassociationIndices>{all(shape.size())});
}

OnnxValue reshaped(NodeContext &ctx, const OnnxValue &v, std::vector<int64_t> shape) {
  if (v.isConstant())
    return OnnxValue::ofConstant(reshape(*v.constant, std::move(shape)));
  return OnnxValue::ofValue(reshapeView(ctx.b, ctx.loc, v.value, shape), v.type);
}

FailureOr<std::vector<int64_t>> broadcastShapeOf(NodeContext &ctx, ArrayRef<const OnnxValue *> inputs) {
  std::vector<int64_t> shape;
  for (const OnnxValue *in : inputs) {
    std::vector<int64_t> next;
    if (!broadcastShapes(shape, in->shape, next)) {
      // The first axis (of the broadcast result, aligned from the right) where they disagree.
      size_t rank = std::max(shape.size(), in->shape.size());
      size_t axis = 0;
      int64_t da = 1, db = 1;
      for (size_t k = 0; k < rank; ++k) {
        da = k < rank - shape.size() ? 1 : shape[k - (rank - shape.size())];
        db = k < rank - in->shape.size() ? 1 : in->shape[k - (rank - in->shape.size())];
        if (da != db && da != 1 && db != 1) {
          axis = k;
          break;
        }
      }
      return ctx.error() << "input shapes do not broadcast: " << shapeString(shape) << " and "
                         << shapeString(in->shape) << " differ at axis " << axis << " of the result (" << da << " vs "
                         << db << "; one of them must be 1)";
    }
    shape = next;
  }
  return shape;
}

Value collapseUnitDims(OpBuilder &b, Location loc, Value v, const std::vector<bool> &keep) {
  auto type = cast<RankedTensorType>(v.getType());
  if (llvm::all_of(keep, [](bool k) { return k; }))
    return v;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices cur;
  bool curHasKept = false;
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (keep[i] && curHasKept) {
      groups.push_back(cur);
      cur.clear();
      curHasKept = false;
    }
    cur.push_back(i);
    if (keep[i]) {
      curHasKept = true;
      shape.push_back(type.getDimSize(i));
    }
  }
  if (curHasKept)
    groups.push_back(cur);
  else if (!groups.empty())
    groups.back().append(cur.begin(), cur.end());
  else
    groups.clear();  // nothing kept: a rank-0 tensor
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
}

namespace {

FailureOr<OnnxValue> elementwiseTo(NodeContext &ctx, ArrayRef<const OnnxValue *> inputs,
                                   ArrayRef<int64_t> outShape, DType resultType,
                                   const ScalarBody &body) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  int64_t rank = outShape.size();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  // For each input: a scalar captured from outside, or the index of its block argument.
  SmallVector<std::pair<Value, int>> args;
  for (const OnnxValue *in : inputs) {
    if (in->isSplat()) {
      args.push_back({elementConstant(b, loc, in->type, *in->constant, 0), -1});
      continue;
    }
    Value v = materialize(ctx, *in);
    int64_t lead = rank - in->rank();
    std::vector<bool> keep(in->rank());
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < in->rank(); ++d) {
      keep[d] = !(in->shape[d] == 1 && outShape[d + lead] != 1);
      if (keep[d])
        exprs.push_back(getAffineDimExpr(d + lead, mc));
    }
    operands.push_back(collapseUnitDims(b, loc, v, keep));
    maps.push_back(AffineMap::get(rank, 0, exprs, mc));
    args.push_back({Value(), static_cast<int>(operands.size()) - 1});
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, mc));
  Value init = tensor::EmptyOp::create(b, loc, outShape, elementType(mc, resultType));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange blockArgs) {
        SmallVector<Value> scalars;
        for (auto [v, index] : args)
          scalars.push_back(index < 0 ? v : blockArgs[index]);
        linalg::YieldOp::create(nb, nl, body(nb, nl, scalars));
      });
  return OnnxValue::ofValue(generic.getResult(0), resultType);
}

} // namespace

FailureOr<OnnxValue> elementwise(NodeContext &ctx, ArrayRef<const OnnxValue *> inputs,
                                 DType resultType, const ScalarBody &body) {
  auto shape = broadcastShapeOf(ctx, inputs);
  if (failed(shape))
    return failure();
  return elementwiseTo(ctx, inputs, *shape, resultType, body);
}

Value broadcastTo(NodeContext &ctx, const OnnxValue &v, ArrayRef<int64_t> shape) {
  if (v.value && v.shape == std::vector<int64_t>(shape.begin(), shape.end()))
    return v.value;
  // A splat (a bias or an int8 correction of one value) as a fill: the initializer form every
  // pass recognizes (a generic yielding the scalar is not recomputed in its readers' kernels,
  // nor widened by the packing passes).
  if (v.isSplat()) {
    OpBuilder &b = ctx.b;
    Value empty = tensor::EmptyOp::create(b, ctx.loc, shape, elementType(b.getContext(), v.type));
    Value scalar = elementConstant(b, ctx.loc, v.type, *v.constant, 0);
    return linalg::FillOp::create(b, ctx.loc, ValueRange{scalar}, ValueRange{empty}).getResult(0);
  }
  auto result = elementwiseTo(ctx, {&v}, shape, v.type,
                              [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return result->value;
}

Value reduce(NodeContext &ctx, Value v, ArrayRef<int64_t> axes, ReduceKind kind) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  MLIRContext *mc = b.getContext();
  auto type = cast<RankedTensorType>(v.getType());
  Type et = type.getElementType();
  int64_t rank = type.getRank();
  SmallVector<int64_t> outShape, keptShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    keptShape.push_back(reduced ? 1 : type.getDimSize(d));
    if (!reduced) {
      outShape.push_back(type.getDimSize(d));
      outExprs.push_back(getAffineDimExpr(d, mc));
    }
  }
  bool isF = isa<FloatType>(et);
  TypedAttr identity;
  if (kind == ReduceKind::kSum || kind == ReduceKind::kSumSquares)
    identity = b.getZeroAttr(et);
  else if (kind == ReduceKind::kProd)
    identity = isF ? TypedAttr(b.getFloatAttr(et, 1.0)) : TypedAttr(b.getIntegerAttr(et, 1));
  else if (isF)
    identity = b.getFloatAttr(et, kind == ReduceKind::kMax ? -std::numeric_limits<double>::infinity()
                                                           : std::numeric_limits<double>::infinity());
  else
    identity = b.getIntegerAttr(et, kind == ReduceKind::kMax ? std::numeric_limits<int64_t>::min()
                                                             : std::numeric_limits<int64_t>::max());
  Value cst = arith::ConstantOp::create(b, loc, identity);
  Value empty = tensor::EmptyOp::create(b, loc, outShape, et);
  Value init = linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty}).getResult(0);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, mc),
                                 AffineMap::get(rank, 0, outExprs, mc)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value r;
        if (kind == ReduceKind::kSum)
          r = addScalar(nb, nl, a[1], a[0]);
        else if (kind == ReduceKind::kSumSquares)
          r = addScalar(nb, nl, a[1], mulScalar(nb, nl, a[0], a[0]));
        else if (kind == ReduceKind::kProd)
          r = mulScalar(nb, nl, a[1], a[0]);
        else if (isF)
          r = kind == ReduceKind::kMax ? arith::MaximumFOp::create(nb, nl, a[1], a[0]).getResult()
                                       : arith::MinimumFOp::create(nb, nl, a[1], a[0]).getResult();
        else
          r = kind == ReduceKind::kMax ? arith::MaxSIOp::create(nb, nl, a[1], a[0]).getResult()
                                       : arith::MinSIOp::create(nb, nl, a[1], a[0]).getResult();
        linalg::YieldOp::create(nb, nl, r);
      });
  return reshapeView(b, loc, generic.getResult(0), keptShape);
}

Value gatherIndex(OpBuilder &b, Location l, Value raw, int64_t dim) {
  Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value dimV = arith::ConstantIndexOp::create(b, l, dim);
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx, zero);
  idx = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, idx, dimV), idx);
  idx = arith::MaxSIOp::create(b, l, idx, zero);
  return arith::MinSIOp::create(b, l, idx, arith::ConstantIndexOp::create(b, l, dim - 1));
}

Value roundHalfToEven(OpBuilder &b, Location l, Value x) {
  auto c = [&](double v) { return floatConst(b, l, v); };
  Value lo = math::FloorOp::create(b, l, x);
  Value frac = arith::SubFOp::create(b, l, x, lo);
  Value hi = arith::AddFOp::create(b, l, lo, c(1.0));
  // lo is even when lo - 2 floor(lo / 2) is 0.
  Value halfLo = math::FloorOp::create(b, l, arith::MulFOp::create(b, l, lo, c(0.5)));
  Value loEven = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                       arith::SubFOp::create(b, l, lo, arith::AddFOp::create(b, l, halfLo, halfLo)), c(0.0));
  Value tie = arith::SelectOp::create(b, l, loEven, lo, hi);
  Value r = arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, frac, c(0.5)), lo, hi);
  r = arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, frac, c(0.5)), tie, r);
  // NaN and infinities pass through (floor keeps them; frac is NaN for both).
  Value special = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, frac, frac);
  return arith::SelectOp::create(b, l, special, x, r);
}

Value generate(NodeContext &ctx, ArrayRef<int64_t> shape, DType type, const IndexedBody &body) {
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  int64_t rank = shape.size();
  Value init = tensor::EmptyOp::create(b, ctx.loc, shape, elementType(mc, type));
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, mc)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(nb, nl, d));
        linalg::YieldOp::create(nb, nl, body(nb, nl, indices));
      });
  return generic.getResult(0);
}

Value transposeValue(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  // The identity (also of rank 0, where linalg.transpose's verifier crashes) moves nothing.
  bool identity = true;
  for (size_t d = 0; d < perm.size(); ++d)
    identity &= perm[d] == static_cast<int64_t>(d);
  if (identity)
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

Value addScalar(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value widenInt(OpBuilder &b, Location loc, Value v, Type to, bool isUnsigned) {
  if (v.getType() == to)
    return v;
  return isUnsigned ? arith::ExtUIOp::create(b, loc, to, v).getResult() : arith::ExtSIOp::create(b, loc, to, v).getResult();
}

void yieldMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args, double alpha, bool unsignedA) {
  Value sum;
  if (!isa<FloatType>(args[2].getType())) {
    Type acc = args[2].getType();
    Value p = arith::MulIOp::create(b, loc, widenInt(b, loc, args[0], acc, unsignedA), widenInt(b, loc, args[1], acc, false));
    sum = arith::AddIOp::create(b, loc, args[2], p);
  } else {
    Value p = arith::MulFOp::create(b, loc, args[0], args[1]);
    if (alpha != 1.0)
      p = arith::MulFOp::create(b, loc, p, floatConst(b, loc, alpha));
    sum = arith::AddFOp::create(b, loc, args[2], p);
  }
  linalg::YieldOp::create(b, loc, sum);
}

Value mulScalar(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

} // namespace hexir::onnx_import

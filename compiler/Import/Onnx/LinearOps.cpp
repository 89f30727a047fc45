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

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

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

namespace {

// One operand's labels of an Einsum equation: a letter per dimension, '.' standing for each
// dimension of the ellipsis.
struct Term {
  std::string labels;
  bool ellipsis = false;
};

// Parses "ij,jk->ik" (spaces allowed; "..." for broadcast dimensions; without "->" the output
// is the letters used once, in alphabetical order, after the ellipsis). Empty on a syntax error.
std::optional<std::pair<std::vector<Term>, Term>> parseEquation(std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq, rhs;
  bool explicitOut = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicitOut = true;
  }
  auto term = [](const std::string &t) -> std::optional<Term> {
    Term r;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        if (r.ellipsis)
          return std::nullopt;
        r.ellipsis = true;
        r.labels += '.';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
        r.labels += t[i];
      } else {
        return std::nullopt;
      }
    }
    return r;
  };
  std::vector<Term> inputs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    auto t = term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!t)
      return std::nullopt;
    inputs.push_back(*t);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  Term out;
  if (explicitOut) {
    auto t = term(rhs);
    if (!t)
      return std::nullopt;
    out = *t;
  } else {
    std::map<char, int> count;
    bool ellipsis = false;
    for (const Term &t : inputs) {
      ellipsis |= t.ellipsis;
      for (char c : t.labels)
        if (c != '.')
          ++count[c];
    }
    out.ellipsis = ellipsis;
    if (ellipsis)
      out.labels = ".";
    for (auto [c, n] : count)
      if (n == 1)
        out.labels += c;
  }
  return std::make_pair(inputs, out);
}

// Einsum as one linalg.generic: a loop per letter (and per ellipsis dimension, broadcast as
// NumPy's), the output's letters parallel, the others reduced; the body multiplies the operands
// and accumulates. A letter repeated in one operand reads its diagonal (the same loop twice).
LogicalResult convertEinsum(NodeContext &ctx) {
  std::string equation = ctx.attrString("equation", "");
  auto parsed = parseEquation(equation);
  if (!parsed)
    return ctx.error() << "equation '" << equation << "' is not an Einsum equation";
  auto &[terms, out] = *parsed;
  if (terms.size() != ctx.numInputs())
    return ctx.error() << "equation '" << equation << "' has " << terms.size() << " operands for "
                       << ctx.numInputs() << " inputs";
  DType type = ctx.input(0).type;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.input(i).type != type || type == DType::kBool || isUnsigned(type))
      return ctx.error() << "inputs must share one float or signed integer type";
  // The ellipsis: the most dimensions any operand gives it, aligned right, broadcast.
  int64_t ellRank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t letters = static_cast<int64_t>(terms[i].labels.size()) - (terms[i].ellipsis ? 1 : 0);
    int64_t rank = ctx.input(i).rank();
    if (terms[i].ellipsis ? rank < letters : rank != letters)
      return ctx.error() << "operand " << i << " '" << terms[i].labels << "' does not match input " << i
                         << " of shape " << shapeString(ctx.input(i).shape);
    if (terms[i].ellipsis)
      ellRank = std::max(ellRank, rank - letters);
  }
  // Loops: the ellipsis dimensions, then each letter in order of first use.
  std::vector<int64_t> extent(ellRank, 1);
  std::map<char, int64_t> dimOf;
  std::string order;
  auto dimFor = [&](char c) {
    if (!dimOf.count(c)) {
      dimOf[c] = ellRank + static_cast<int64_t>(order.size());
      order += c;
      extent.push_back(-1);
    }
    return dimOf[c];
  };
  for (char c : out.labels)
    if (c != '.')
      dimFor(c);
  MLIRContext *mc = ctx.b.getContext();
  std::vector<std::vector<AffineExpr>> inExprs(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::vector<int64_t> &shape = ctx.input(i).shape;
    int64_t axis = 0, ownEll = shape.size() - (terms[i].labels.size() - (terms[i].ellipsis ? 1 : 0));
    for (char c : terms[i].labels) {
      if (c == '.') {
        for (int64_t k = 0; k < ownEll; ++k, ++axis) {
          int64_t d = ellRank - ownEll + k, size = shape[axis];
          if (extent[d] != 1 && size != 1 && size != extent[d])
            return ctx.error() << "the ellipsis dimensions of input " << i << " do not broadcast";
          if (size != 1)
            extent[d] = size;
          inExprs[i].push_back(getAffineDimExpr(d, mc));  // a size-1 dim is fixed at 0 below
        }
        continue;
      }
      int64_t d = dimFor(c), size = shape[axis++];
      if (extent[d] >= 0 && extent[d] != size)
        return ctx.error() << "letter '" << c << "' has sizes " << extent[d] << " and " << size;
      extent[d] = size;
      inExprs[i].push_back(getAffineDimExpr(d, mc));
    }
  }
  // A size-1 ellipsis dimension against a larger loop reads index 0 (NumPy broadcasting).
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t a = 0; a < inExprs[i].size(); ++a)
      if (auto d = dyn_cast<AffineDimExpr>(inExprs[i][a]);
          d && d.getPosition() < static_cast<unsigned>(ellRank) && ctx.input(i).shape[a] == 1 &&
          extent[d.getPosition()] != 1)
        inExprs[i][a] = getAffineConstantExpr(0, mc);
  std::vector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  for (char c : out.labels) {
    if (c == '.') {
      for (int64_t d = 0; d < ellRank; ++d) {
        outExprs.push_back(getAffineDimExpr(d, mc));
        outShape.push_back(extent[d]);
      }
      continue;
    }
    if (!dimOf.count(c) || extent[dimOf[c]] < 0)
      return ctx.error() << "output letter '" << c << "' is in no operand";
    outExprs.push_back(getAffineDimExpr(dimOf[c], mc));
    outShape.push_back(extent[dimOf[c]]);
  }
  // (Ellipsis dimensions the output leaves out are summed, as letters it leaves out are.)
  int64_t loops = static_cast<int64_t>(extent.size());
  SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::reduction);
  for (AffineExpr e : outExprs)
    iterators[cast<AffineDimExpr>(e).getPosition()] = utils::IteratorType::parallel;
  OpBuilder &b = ctx.b;
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (size_t i = 0; i < terms.size(); ++i) {
    operands.push_back(materialize(ctx, ctx.input(i)));
    maps.push_back(AffineMap::get(loops, 0, inExprs[i], mc));
  }
  maps.push_back(AffineMap::get(loops, 0, outExprs, mc));
  Value init = zeroFilled(b, ctx.loc, outShape, type);
  size_t n = operands.size();
  auto generic = linalg::GenericOp::create(b, ctx.loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps,
                                           iterators, [n](OpBuilder &nb, Location nl, ValueRange a) {
                                             Value p = a[0];
                                             for (size_t k = 1; k < n; ++k)
                                               p = mulScalar(nb, nl, p, a[k]);
                                             linalg::YieldOp::create(nb, nl, addScalar(nb, nl, a[n], p));
                                           });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), type));
  return success();
}

} // namespace

void addLinearOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Einsum", 13, 21, convertEinsum, "", "equation", -1},
      {"Gemm", 13, 21, convertGemm, "", "alpha beta transA transB", 2},
      {"MatMul", 13, 21, convertMatMul, "float tensors", "", 2},
  });
}

} // namespace hexir::onnx_import

//===- MathOps.cpp - ONNX math functions and activations ------------------===//
//
// Trigonometric and hyperbolic functions, rounding, signs, NaN and infinity tests, Mod, the
// variadic Sum and Mean, and the activations ONNX defines beyond Relu (Elu, Selu, Celu,
// Softplus, Softsign, ThresholdedRelu, Shrink, PRelu, Gelu, Mish). Each is built from math ops
// that every target lowers without libm (polynomial approximations of exp, expm1, log1p, sin,
// cos, atan2, tanh, erf; floor for rounding), so host and CUDA kernels compute them alike.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Elementwise.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

using B = OpBuilder;
using L = Location;

Value add(B &b, L l, Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
Value sub(B &b, L l, Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
Value mul(B &b, L l, Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
Value div(B &b, L l, Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
Value cst(B &b, L l, double v) { return floatConst(b, l, v); }
Value cmp(B &b, L l, arith::CmpFPredicate p, Value x, Value y) { return arith::CmpFOp::create(b, l, p, x, y); }
Value select(B &b, L l, Value c, Value x, Value y) { return arith::SelectOp::create(b, l, c, x, y); }
Value sqrt1(B &b, L l, Value x) { return math::SqrtOp::create(b, l, x); }

// sqrt(1 - x * x), the other leg of asin and acos.
Value cosineLeg(B &b, L l, Value x) { return sqrt1(b, l, sub(b, l, cst(b, l, 1.0), mul(b, l, x, x))); }

// --- trigonometric and hyperbolic functions ----------------------------------------------

LogicalResult convertSin(NodeContext &ctx) { return convertMathUnary<math::SinOp>(ctx, std::sin); }
LogicalResult convertCos(NodeContext &ctx) { return convertMathUnary<math::CosOp>(ctx, std::cos); }
LogicalResult convertAtan(NodeContext &ctx) { return convertMathUnary<math::AtanOp>(ctx, std::atan); }
LogicalResult convertTan(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::tan(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    return div(b, l, math::SinOp::create(b, l, a[0]), math::CosOp::create(b, l, a[0]));
  });
}
// asin(x) = atan2(x, sqrt(1 - x^2)) and acos(x) = atan2(sqrt(1 - x^2), x): NaN outside [-1, 1].
LogicalResult convertAsin(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::asin(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    return math::Atan2Op::create(b, l, a[0], cosineLeg(b, l, a[0]));
  });
}
LogicalResult convertAcos(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::acos(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    return math::Atan2Op::create(b, l, cosineLeg(b, l, a[0]), a[0]);
  });
}
// sinh through expm1, exact near 0 where exp(x) - exp(-x) cancels.
LogicalResult convertSinh(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::sinh(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    Value up = math::ExpM1Op::create(b, l, a[0]);
    Value down = math::ExpM1Op::create(b, l, arith::NegFOp::create(b, l, a[0]));
    return mul(b, l, sub(b, l, up, down), cst(b, l, 0.5));
  });
}
LogicalResult convertCosh(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::cosh(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    Value up = math::ExpOp::create(b, l, a[0]);
    Value down = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
    return mul(b, l, add(b, l, up, down), cst(b, l, 0.5));
  });
}
// asinh(x) = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), exact near 0.
LogicalResult convertAsinh(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::asinh(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    Value ax = math::AbsFOp::create(b, l, a[0]);
    Value sq = mul(b, l, ax, ax);
    Value one = cst(b, l, 1.0);
    Value t = add(b, l, ax, div(b, l, sq, add(b, l, one, sqrt1(b, l, add(b, l, one, sq)))));
    return math::CopySignOp::create(b, l, math::Log1pOp::create(b, l, t), a[0]);
  });
}
// acosh(x) = log(x + sqrt((x - 1)(x + 1))): NaN below 1; the product keeps x - 1 exact near 1.
LogicalResult convertAcosh(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::acosh(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    Value one = cst(b, l, 1.0);
    Value r = sqrt1(b, l, mul(b, l, sub(b, l, a[0], one), add(b, l, a[0], one)));
    return math::LogOp::create(b, l, add(b, l, a[0], r));
  });
}
// atanh(x) = log1p(2x / (1 - x)) / 2.
LogicalResult convertAtanh(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return std::atanh(a[0]); }, [](B &b, L l, ValueRange a) -> Value {
    Value q = div(b, l, add(b, l, a[0], a[0]), sub(b, l, cst(b, l, 1.0), a[0]));
    return mul(b, l, math::Log1pOp::create(b, l, q), cst(b, l, 0.5));
  });
}

// --- rounding, signs, tests ---------------------------------------------------------------

// Round half to even, as ONNX and NumPy (folded with nearbyint; in kernels roundHalfToEven,
// Emit.h, from floor, which every CPU level has).
double roundHalfEven(double x) { return std::nearbyint(x); }
LogicalResult convertRound(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return roundHalfEven(a[0]); },
                      [](B &b, L l, ValueRange a) -> Value { return roundHalfToEven(b, l, a[0]); });
}

LogicalResult convertSign(NodeContext &ctx) {
  return convertElementwise(
      ctx, 1, -1, [](auto &a) { return std::isnan(a[0]) ? a[0] : double((a[0] > 0) - (a[0] < 0)); },
      [](auto &a) { return int64_t((a[0] > 0) - (a[0] < 0)); },
      [](B &b, L l, ValueRange a) -> Value {
        Type t = a[0].getType();
        if (isa<FloatType>(t)) {
          Value pos = select(b, l, cmp(b, l, arith::CmpFPredicate::OGT, a[0], cst(b, l, 0.0)), cst(b, l, 1.0),
                             cst(b, l, 0.0));
          Value r = select(b, l, cmp(b, l, arith::CmpFPredicate::OLT, a[0], cst(b, l, 0.0)), cst(b, l, -1.0), pos);
          return select(b, l, cmp(b, l, arith::CmpFPredicate::UNO, a[0], a[0]), a[0], r);
        }
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
        Value gt = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[0], zero));
        Value lt = arith::ExtUIOp::create(b, l, t, arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[0], zero));
        return arith::SubIOp::create(b, l, gt, lt);
      });
}

LogicalResult convertIsNaN(NodeContext &ctx) {
  if (failed(requireFloat(ctx)))
    return failure();
  return convertElementwise(ctx, 1, static_cast<int>(DType::kBool), [](auto &a) { return double(std::isnan(a[0])); },
                            nullptr, [](B &b, L l, ValueRange a) -> Value {
                              return toBool(b, l, cmp(b, l, arith::CmpFPredicate::UNO, a[0], a[0]));
                            });
}

LogicalResult convertIsInf(NodeContext &ctx) {
  if (failed(requireFloat(ctx)))
    return failure();
  bool pos = ctx.attrInt("detect_positive", 1) != 0, neg = ctx.attrInt("detect_negative", 1) != 0;
  return convertElementwise(
      ctx, 1, static_cast<int>(DType::kBool),
      [=](auto &a) { return double((pos && a[0] == INFINITY) || (neg && a[0] == -INFINITY)); }, nullptr,
      [=](B &b, L l, ValueRange a) -> Value {
        Value no = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
        Value isPos = pos ? cmp(b, l, arith::CmpFPredicate::OEQ, a[0], cst(b, l, INFINITY)) : no;
        Value isNeg = neg ? cmp(b, l, arith::CmpFPredicate::OEQ, a[0], cst(b, l, -INFINITY)) : no;
        return toBool(b, l, arith::OrIOp::create(b, l, isPos, isNeg));
      });
}

// Mod: fmod=1, C's fmod (the dividend's sign; floats need it); fmod=0, the divisor's sign, as
// Python's %. An integer remainder by 0 is 0, as Div's quotient (no trap in a kernel).
double fmodFold(double x, double y) { return std::fmod(x, y); }
int64_t modFold(int64_t x, int64_t y, bool fmod) {
  if (y == 0)
    return 0;
  if (y == -1)
    return 0;  // INT64_MIN % -1 overflows in C++; the remainder is 0
  int64_t r = x % y;
  return (!fmod && r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
LogicalResult convertMod(NodeContext &ctx) {
  bool fmod = ctx.attrInt("fmod", 0) != 0;
  if (ctx.input(0).type != ctx.input(1).type)
    return ctx.error() << "inputs have different element types (" << dtypeName(ctx.input(0).type) << " and "
                       << dtypeName(ctx.input(1).type) << ")";
  if (isFloat(ctx.input(0).type) && !fmod)
    return ctx.error() << "fmod=0 on float tensors; ONNX requires fmod=1 for them";
  // Unsigned: the plain remainder (no sign to follow), by 0 gives 0.
  bool isU = isUnsigned(ctx.input(0).type);
  FoldI iop = [fmod](auto &a) { return modFold(a[0], a[1], fmod); };
  if (isU)
    iop = [](auto &a) -> int64_t {
      uint64_t x = static_cast<uint64_t>(a[0]), y = static_cast<uint64_t>(a[1]);
      return y == 0 ? 0 : static_cast<int64_t>(x % y);
    };
  return convertElementwise(
      ctx, 2, -1, [](auto &a) { return fmodFold(a[0], a[1]); }, iop,
      [fmod, isU](B &b, L l, ValueRange a) -> Value {
        Type t = a[0].getType();
        if (isa<FloatType>(t)) {
          // x - trunc(x / y) y, trunc from floor and ceil (every CPU level has them).
          Value q = div(b, l, a[0], a[1]);
          Value tq = select(b, l, cmp(b, l, arith::CmpFPredicate::OLT, q, cst(b, l, 0.0)),
                            math::CeilOp::create(b, l, q), math::FloorOp::create(b, l, q));
          return math::FmaOp::create(b, l, arith::NegFOp::create(b, l, tq), a[1], a[0]);
        }
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
        Value one = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 1));
        if (isU) {
          Value byZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], zero);
          Value r = arith::RemUIOp::create(b, l, a[0], arith::SelectOp::create(b, l, byZero, one, a[1]));
          return arith::SelectOp::create(b, l, byZero, zero, r);
        }
        Value minusOne = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, -1));
        // A divisor of 0 or -1 gives 0: divide by 1 instead and select 0 (no trap, no overflow).
        Value trivial = arith::OrIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], zero),
                                             arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], minusOne));
        Value divisor = arith::SelectOp::create(b, l, trivial, one, a[1]);
        Value r = arith::RemSIOp::create(b, l, a[0], divisor);
        if (!fmod) {
          Value nonzero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
          Value signs = arith::XOrIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero),
                                              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, divisor, zero));
          Value fix = arith::AndIOp::create(b, l, nonzero, signs);
          r = arith::SelectOp::create(b, l, fix, arith::AddIOp::create(b, l, r, divisor), r);
        }
        return arith::SelectOp::create(b, l, trivial, zero, r);
      });
}

// CumSum along `axis`: out[i] = the sum of x[j] for j <= i (j < i exclusive; j >= i, j > i in
// reverse), a linalg.generic with a reduction loop over the axis that selects the terms: O(n^2)
// along the axis, in any order the kernel likes.
LogicalResult convertCumSum(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0);
  if (x.type == DType::kBool || x.type == DType::kInt8 || isUnsigned(x.type))
    return ctx.error() << "input must be a float, int64, int32 or int16 tensor";
  auto axisT = ctx.requireScalar(1, "axis");
  if (failed(axisT))
    return failure();
  int64_t axis = axisT->asInt(0);
  if (x.rank() == 0 || !normalizeAxis(axis, x.rank()))
    return ctx.error() << "axis " << axisT->asInt(0) << " is out of range for rank " << x.rank();
  bool exclusive = ctx.attrInt("exclusive", 0) != 0, reverse = ctx.attrInt("reverse", 0) != 0;
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  int64_t rank = x.rank();
  // Loops: the output's dims, then j along the axis.
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < rank; ++d) {
    in.push_back(getAffineDimExpr(d == axis ? rank : d, mc));
    out.push_back(getAffineDimExpr(d, mc));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, in, mc), AffineMap::get(rank + 1, 0, out, mc)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value empty = tensor::EmptyOp::create(b, ctx.loc, x.shape, elementType(mc, x.type));
  Value init = linalg::FillOp::create(b, ctx.loc, ValueRange{scalarConstant(b, ctx.loc, x.type, 0.0)},
                                      ValueRange{empty})
                   .getResult(0);
  arith::CmpIPredicate pred = reverse ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
                                      : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{materialize(ctx, x)}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value j = linalg::IndexOp::create(nb, nl, rank), i = linalg::IndexOp::create(nb, nl, axis);
        Value take = arith::CmpIOp::create(nb, nl, pred, j, i);
        Value zero = isa<FloatType>(a[0].getType())
                         ? arith::ConstantOp::create(nb, nl, nb.getFloatAttr(a[0].getType(), 0.0)).getResult()
                         : arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(a[0].getType(), 0)).getResult();
        linalg::YieldOp::create(nb, nl, addScalar(nb, nl, a[1], arith::SelectOp::create(nb, nl, take, a[0], zero)));
      });
  ctx.setOutput(0, OnnxValue::ofValue(generic.getResult(0), x.type));
  return success();
}

// --- Sum and Mean (variadic, broadcasting) ------------------------------------------------

LogicalResult convertSumOrMean(NodeContext &ctx, bool mean) {
  size_t n = ctx.numInputs();
  if (failed(requireFloat(ctx)))
    return failure();
  double scale = 1.0 / static_cast<double>(n);
  return convertElementwise(
      ctx, n, -1,
      [=](auto &a) {
        double s = 0;
        for (double v : a)
          s += v;
        return mean ? s * scale : s;
      },
      nullptr,
      [=](B &b, L l, ValueRange a) -> Value {
        Value s = a[0];
        for (size_t k = 1; k < a.size(); ++k)
          s = add(b, l, s, a[k]);
        return mean && a.size() > 1 ? div(b, l, s, cst(b, l, static_cast<double>(a.size()))) : s;
      });
}
LogicalResult convertSum(NodeContext &ctx) { return convertSumOrMean(ctx, false); }
LogicalResult convertMean(NodeContext &ctx) { return convertSumOrMean(ctx, true); }

// --- activations --------------------------------------------------------------------------

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
Value softplus(B &b, L l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x)));
  return add(b, l, arith::MaximumFOp::create(b, l, x, cst(b, l, 0.0)), math::Log1pOp::create(b, l, e));
}
double softplusFold(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

LogicalResult convertSoftplus(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return softplusFold(a[0]); },
                      [](B &b, L l, ValueRange a) { return softplus(b, l, a[0]); });
}
LogicalResult convertSoftsign(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return a[0] / (1 + std::fabs(a[0])); }, [](B &b, L l, ValueRange a) -> Value {
    return div(b, l, a[0], add(b, l, cst(b, l, 1.0), math::AbsFOp::create(b, l, a[0])));
  });
}
LogicalResult convertMish(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return a[0] * std::tanh(softplusFold(a[0])); },
                      [](B &b, L l, ValueRange a) -> Value {
                        return mul(b, l, a[0], math::TanhOp::create(b, l, softplus(b, l, a[0])));
                      });
}
// x > 0 ? scale x : scale alpha expm1(x): Elu (scale 1) and Selu.
LogicalResult convertEluLike(NodeContext &ctx, double alpha, double scale) {
  return convertUnary(ctx, [=](auto &a) { return scale * (a[0] > 0 ? a[0] : alpha * std::expm1(a[0])); },
                      [=](B &b, L l, ValueRange a) -> Value {
                        Value neg = mul(b, l, math::ExpM1Op::create(b, l, a[0]), cst(b, l, alpha));
                        Value y = select(b, l, cmp(b, l, arith::CmpFPredicate::OGT, a[0], cst(b, l, 0.0)), a[0], neg);
                        return scale == 1.0 ? y : mul(b, l, y, cst(b, l, scale));
                      });
}
LogicalResult convertElu(NodeContext &ctx) { return convertEluLike(ctx, ctx.attrFloat("alpha", 1.0f), 1.0); }
LogicalResult convertSelu(NodeContext &ctx) {
  return convertEluLike(ctx, ctx.attrFloat("alpha", 1.67326319217681884765625f),
                        ctx.attrFloat("gamma", 1.05070102214813232421875f));
}
// max(0, x) + min(0, alpha expm1(x / alpha)).
LogicalResult convertCelu(NodeContext &ctx) {
  double alpha = ctx.attrFloat("alpha", 1.0f);
  if (alpha == 0)
    return ctx.error() << "alpha must not be 0";
  return convertUnary(ctx,
                      [=](auto &a) { return std::max(0.0, a[0]) + std::min(0.0, alpha * std::expm1(a[0] / alpha)); },
                      [=](B &b, L l, ValueRange a) -> Value {
                        Value e = mul(b, l, math::ExpM1Op::create(b, l, div(b, l, a[0], cst(b, l, alpha))),
                                      cst(b, l, alpha));
                        return add(b, l, arith::MaximumFOp::create(b, l, a[0], cst(b, l, 0.0)),
                                   arith::MinimumFOp::create(b, l, e, cst(b, l, 0.0)));
                      });
}
LogicalResult convertThresholdedRelu(NodeContext &ctx) {
  double alpha = ctx.attrFloat("alpha", 1.0f);
  return convertUnary(ctx, [=](auto &a) { return a[0] > alpha ? a[0] : 0.0; }, [=](B &b, L l, ValueRange a) -> Value {
    return select(b, l, cmp(b, l, arith::CmpFPredicate::OGT, a[0], cst(b, l, alpha)), a[0], cst(b, l, 0.0));
  });
}
LogicalResult convertShrink(NodeContext &ctx) {
  double lambd = ctx.attrFloat("lambd", 0.5f), bias = ctx.attrFloat("bias", 0.0f);
  return convertUnary(ctx, [=](auto &a) { return a[0] < -lambd ? a[0] + bias : a[0] > lambd ? a[0] - bias : 0.0; },
                      [=](B &b, L l, ValueRange a) -> Value {
                        Value hi = select(b, l, cmp(b, l, arith::CmpFPredicate::OGT, a[0], cst(b, l, lambd)),
                                          sub(b, l, a[0], cst(b, l, bias)), cst(b, l, 0.0));
                        return select(b, l, cmp(b, l, arith::CmpFPredicate::OLT, a[0], cst(b, l, -lambd)),
                                      add(b, l, a[0], cst(b, l, bias)), hi);
                      });
}
// PRelu: the slope broadcasts to x (unidirectionally, as ONNX says; NumPy's rules suffice here
// because the result must keep x's shape, checked below).
LogicalResult convertPRelu(NodeContext &ctx) {
  if (failed(requireFloat(ctx)))
    return failure();
  std::vector<const OnnxValue *> both = {&ctx.input(0), &ctx.input(1)};
  FailureOr<std::vector<int64_t>> shape = broadcastShapeOf(ctx, both);
  if (failed(shape))
    return failure();
  if (*shape != ctx.input(0).shape)
    return ctx.error() << "slope " << shapeString(ctx.input(1).shape) << " does not broadcast to X "
                       << shapeString(ctx.input(0).shape);
  return convertElementwise(ctx, 2, -1, [](auto &a) { return a[0] < 0 ? a[1] * a[0] : a[0]; }, nullptr,
                            [](B &b, L l, ValueRange a) -> Value {
                              return select(b, l, cmp(b, l, arith::CmpFPredicate::OLT, a[0], cst(b, l, 0.0)),
                                            mul(b, l, a[1], a[0]), a[0]);
                            });
}
// Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh" PyTorch's tanh form.
LogicalResult convertGelu(NodeContext &ctx) {
  std::string approximate = ctx.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.error() << "approximate must be \"none\" or \"tanh\", got \"" << approximate << "\"";
  bool tanhForm = approximate == "tanh";
  const double k = std::sqrt(2.0 / M_PI);
  return convertUnary(
      ctx,
      [=](auto &a) {
        double x = a[0];
        return tanhForm ? 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))) : 0.5 * x * (1 + std::erf(x / M_SQRT2));
      },
      [=](B &b, L l, ValueRange a) -> Value {
        Value x = a[0], inner;
        if (tanhForm) {
          Value cube = mul(b, l, mul(b, l, x, x), x);
          inner = math::TanhOp::create(b, l, mul(b, l, add(b, l, x, mul(b, l, cube, cst(b, l, 0.044715))), cst(b, l, k)));
        } else {
          inner = math::ErfOp::create(b, l, mul(b, l, x, cst(b, l, M_SQRT1_2)));
        }
        return mul(b, l, mul(b, l, x, cst(b, l, 0.5)), add(b, l, cst(b, l, 1.0), inner));
      });
}

// Xor of bools.
LogicalResult convertXor(NodeContext &ctx) {
  for (size_t i : {0, 1})
    if (ctx.input(i).type != DType::kBool)
      return ctx.error() << "input " << i << " must be a bool tensor";
  return convertElementwise(ctx, 2, -1, nullptr, [](auto &a) { return int64_t((a[0] != 0) != (a[1] != 0)); },
                            [](B &b, L l, ValueRange a) -> Value {
                              return toBool(b, l, arith::XOrIOp::create(b, l, fromBool(b, l, a[0]),
                                                                        fromBool(b, l, a[1])));
                            });
}

} // namespace

void addMathOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Acos", 13, 21, convertAcos, "", "", 1},
      {"Acosh", 13, 21, convertAcosh, "", "", 1},
      {"Asin", 13, 21, convertAsin, "", "", 1},
      {"Asinh", 13, 21, convertAsinh, "", "", 1},
      {"Atan", 13, 21, convertAtan, "", "", 1},
      {"Atanh", 13, 21, convertAtanh, "", "", 1},
      {"Celu", 13, 21, convertCelu, "", "alpha", 1},
      {"Cos", 13, 21, convertCos, "", "", 1},
      {"Cosh", 13, 21, convertCosh, "", "", 1},
      {"Elu", 13, 21, convertElu, "", "alpha", 1},
      {"Gelu", 20, 21, convertGelu, "", "approximate", 1},
      {"IsInf", 13, 21, convertIsInf, "", "detect_negative detect_positive", 1},
      {"IsNaN", 13, 21, convertIsNaN, "", "", 1},
      {"Mean", 13, 21, convertMean, "", "", -1},
      {"Mish", 18, 21, convertMish, "", "", 1},
      {"CumSum", 13, 21, convertCumSum, "axis known at compile time", "exclusive reverse", 2},
      {"Mod", 13, 21, convertMod, "", "fmod", 2, nullptr, true},
      {"PRelu", 13, 21, convertPRelu, "", "", 2},
      {"Round", 13, 21, convertRound, "", "", 1},
      {"Selu", 13, 21, convertSelu, "", "alpha gamma", 1},
      {"Shrink", 13, 21, convertShrink, "float tensors", "bias lambd", 1},
      {"Sign", 13, 21, convertSign, "", "", 1},
      {"Sin", 13, 21, convertSin, "", "", 1},
      {"Sinh", 13, 21, convertSinh, "", "", 1},
      {"Softplus", 13, 21, convertSoftplus, "", "", 1},
      {"Softsign", 13, 21, convertSoftsign, "", "", 1},
      {"Sum", 13, 21, convertSum, "", "", -1},
      {"Tan", 13, 21, convertTan, "", "", 1},
      {"ThresholdedRelu", 13, 21, convertThresholdedRelu, "", "alpha", 1},
      {"Xor", 13, 21, convertXor, "", "", 2},
  });
}

} // namespace hexir::onnx_import

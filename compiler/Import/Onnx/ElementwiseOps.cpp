//===- ElementwiseOps.cpp - ONNX elementwise ops --------------------------===//
//
// Arithmetic, comparisons, activations and Cast, with NumPy broadcasting. All-constant inputs
// are folded at import (shape arithmetic, masks) when the result has at most kMaxFoldedElements;
// otherwise one linalg.generic.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Elementwise.h"
#include "Import/Onnx/FloatBits.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>
#include <functional>
#include <optional>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Integer arithmetic as the kernels do it, two's complement wrapping: folding a constant must
// give the same bits as running the op, and signed overflow in C++ is undefined.
template <typename Op>
int64_t wrapping(int64_t a, int64_t b, Op op) {
  return static_cast<int64_t>(op(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
}

bool isF(Value v) { return isa<FloatType>(v.getType()); }

} // namespace

Value toBool(OpBuilder &b, Location loc, Value i1) {
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), i1);
}
Value fromBool(OpBuilder &b, Location loc, Value i8) {
  Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, i8, zero);
}

LogicalResult convertElementwise(NodeContext &ctx, size_t numInputs, int resultTypeOverride,
                                 const FoldF &fop, const FoldI &iop, const ScalarBody &body) {
  std::vector<const OnnxValue *> inputs;
  for (size_t i = 0; i < numInputs; ++i) {
    if (!ctx.hasInput(i))
      return ctx.error() << "input " << i << " is missing";
    inputs.push_back(&ctx.input(i));
  }
  DType type = inputs.back()->type;
  if (resultTypeOverride >= 0)
    type = static_cast<DType>(resultTypeOverride);
  bool allConstant = llvm::all_of(inputs, [](const OnnxValue *v) { return v->isConstant(); });
  if (allConstant) {
    FailureOr<std::vector<int64_t>> shape = broadcastShapeOf(ctx, inputs);
    if (failed(shape))
      return failure();
    allConstant = foldable(*shape);  // else computed at run time, as ONNX Runtime would
  }
  if (allConstant) {
    std::vector<const HostTensor *> hosts;
    for (const OnnxValue *v : inputs)
      hosts.push_back(&*v->constant);
    ctx.setOutput(0, OnnxValue::ofConstant(foldElementwise(hosts, type, fop, iop)));
    return success();
  }
  auto result = elementwise(ctx, inputs, type, body);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult requireFloat(NodeContext &ctx) {
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && !isFloat(ctx.input(i).type))
      return ctx.error() << "input " << i << " has element type " << dtypeName(ctx.input(i).type)
                         << "; Hexir implements this op for float tensors";
  return success();
}

LogicalResult convertUnary(NodeContext &ctx, const FoldF &fop, const ScalarBody &body) {
  if (failed(requireFloat(ctx)))
    return failure();
  return convertElementwise(ctx, 1, -1, fop, nullptr, body);
}

namespace {

// Binary ops whose inputs must have one element type.
LogicalResult checkSameTypes(NodeContext &ctx, size_t n) {
  for (size_t i = 1; i < n; ++i)
    if (ctx.hasInput(i) && ctx.hasInput(0) && ctx.input(i).type != ctx.input(0).type)
      return ctx.error() << "inputs have different element types (" << dtypeName(ctx.input(0).type)
                         << " and " << dtypeName(ctx.input(i).type) << ")";
  return success();
}

// --- arithmetic -------------------------------------------------------------------------

LogicalResult convertAdd(NodeContext &ctx) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  return convertElementwise(
      ctx, 2, -1, [](auto &a) { return a[0] + a[1]; }, [](auto &a) { return wrapping(a[0], a[1], std::plus<>()); },
      [](OpBuilder &b, Location l, ValueRange a) { return addScalar(b, l, a[0], a[1]); });
}

LogicalResult convertSub(NodeContext &ctx) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  return convertElementwise(
      ctx, 2, -1, [](auto &a) { return a[0] - a[1]; }, [](auto &a) { return wrapping(a[0], a[1], std::minus<>()); },
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isF(a[0]))
          return arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::SubIOp::create(b, l, a[0], a[1]);
      });
}

LogicalResult convertMul(NodeContext &ctx) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  return convertElementwise(
      ctx, 2, -1, [](auto &a) { return a[0] * a[1]; }, [](auto &a) { return wrapping(a[0], a[1], std::multiplies<>()); },
      [](OpBuilder &b, Location l, ValueRange a) { return mulScalar(b, l, a[0], a[1]); });
}

LogicalResult convertDiv(NodeContext &ctx) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  if (isUnsigned(ctx.input(0).type))  // unsigned: the plain quotient; by 0 gives 0
    return convertElementwise(
        ctx, 2, -1, nullptr,
        [](auto &a) -> int64_t {
          uint64_t x = static_cast<uint64_t>(a[0]), y = static_cast<uint64_t>(a[1]);
          return y == 0 ? 0 : static_cast<int64_t>(x / y);
        },
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
          Value byZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], zero);
          Value q = arith::DivUIOp::create(
              b, l, a[0], arith::SelectOp::create(b, l, byZero, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 1)), a[1]));
          return arith::SelectOp::create(b, l, byZero, zero, q);
        });
  return convertElementwise(
      ctx, 2, -1, [](auto &a) { return a[0] / a[1]; },
      // As the kernels compute it: x / 0 = 0, x / -1 = -x wrapping (MIN / -1 = MIN), never a trap.
      [](auto &a) -> int64_t {
        return a[1] == 0 ? 0 : a[1] == -1 ? wrapping(int64_t(0), a[0], std::minus<>()) : a[0] / a[1];
      },
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isF(a[0]))
          return arith::DivFOp::create(b, l, a[0], a[1]);
        // Integer division by 0 (and MIN / -1) would trap the process: they give 0 and -MIN.
        Type t = a[0].getType();
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
        Value one = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 1));
        Value minusOne = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, -1));
        Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], zero);
        Value isMinusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], minusOne);
        Value unsafe = arith::OrIOp::create(b, l, isZero, isMinusOne);
        Value divisor = arith::SelectOp::create(b, l, unsafe, one, a[1]);
        Value q = arith::DivSIOp::create(b, l, a[0], divisor);
        Value neg = arith::SubIOp::create(b, l, zero, a[0]);
        Value r = arith::SelectOp::create(b, l, isMinusOne, neg, q);
        return arith::SelectOp::create(b, l, isZero, zero, r);
      });
}

// x^n for integers by square-and-multiply over the 63 bits of n >= 0 (wrapping, as NumPy's
// integer power); a negative n gives 1 / x^|n| truncated: 1 for x = 1, +-1 for x = -1, else 0.
Value integerPower(OpBuilder &b, Location l, Value x, Value n) {
  Type t = x.getType();
  auto cst = [&](int64_t v) -> Value { return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, v)); };
  Value one = cst(1), zero = cst(0);
  Value r = one, base = x;
  for (int bit = 0; bit < static_cast<int>(t.getIntOrFloatBitWidth()) - 1; ++bit) {
    Value set = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                      arith::AndIOp::create(b, l, n, cst(int64_t{1} << bit)), zero);
    r = arith::SelectOp::create(b, l, set, arith::MulIOp::create(b, l, r, base), r);
    base = arith::MulIOp::create(b, l, base, base);
  }
  Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, n, zero);
  Value odd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, arith::AndIOp::create(b, l, n, one), zero);
  Value isOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, one);
  Value isMinusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, cst(-1));
  Value inverse = arith::SelectOp::create(b, l, isOne, one,
                                          arith::SelectOp::create(b, l, isMinusOne,
                                                                  arith::SelectOp::create(b, l, odd, cst(-1), one), zero));
  return arith::SelectOp::create(b, l, negative, inverse, r);
}

int64_t foldIntegerPower(int64_t x, int64_t n) {
  if (n < 0)
    return x == 1 ? 1 : x == -1 ? (n & 1 ? -1 : 1) : 0;
  uint64_t r = 1, base = static_cast<uint64_t>(x);
  for (uint64_t k = static_cast<uint64_t>(n); k > 0; k >>= 1) {
    if (k & 1)
      r *= base;
    base *= base;
  }
  return static_cast<int64_t>(r);
}

// Pow: the result has X's type. Floats: exp(y log x) (a constant integral exponent is repeated
// multiplication, 0.5 a square root); an integer Y is converted. Integers: an integer power, or
// for a float Y the float power truncated (an integral Y is the exact integer power).
LogicalResult convertPow(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0), &y = ctx.input(1);
  for (size_t i = 0; i < 2; ++i)
    if (ctx.input(i).type == DType::kBool || ctx.input(i).type == DType::kUInt8)
      return ctx.error() << "input " << i << " has element type " << dtypeName(ctx.input(i).type)
                         << "; Pow takes float and signed integer tensors";
  bool floatX = isFloat(x.type), floatY = isFloat(y.type);
  int resultType = static_cast<int>(x.type);
  if (floatX && y.isSplat() && !x.isConstant()) {
    double e = y.constant->asDouble(0);
    if (e == 0.5)
      return convertElementwise(ctx, 1, resultType, nullptr, nullptr,
                                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                  return math::SqrtOp::create(b, l, a[0]);
                                });
    if (e == std::floor(e) && std::fabs(e) <= 16) {
      int64_t n = static_cast<int64_t>(std::fabs(e));
      bool reciprocal = e < 0;
      return convertElementwise(ctx, 1, resultType, nullptr, nullptr,
                                [n, reciprocal](OpBuilder &b, Location l, ValueRange a) -> Value {
                                  Value r = floatConst(b, l, 1.0);
                                  // Square-and-multiply keeps the product count (and the
                                  // rounding) close to powf's.
                                  Value base = a[0];
                                  for (int64_t k = n; k > 0; k >>= 1) {
                                    if (k & 1)
                                      r = arith::MulFOp::create(b, l, r, base);
                                    if (k > 1)
                                      base = arith::MulFOp::create(b, l, base, base);
                                  }
                                  if (reciprocal)
                                    r = arith::DivFOp::create(b, l, floatConst(b, l, 1.0), r);
                                  return r;
                                });
    }
  }
  // exp(e log|x|), negated for a negative x and an odd integral e, NaN for a negative x and a
  // fractional e, and 1 for e = 0 (NumPy's 0^0 and NaN^0).
  auto floatPower = [](OpBuilder &b, Location l, Value base, Value e) -> Value {
    Value magnitude = math::ExpOp::create(
        b, l, arith::MulFOp::create(b, l, e, math::LogOp::create(b, l, math::AbsFOp::create(b, l, base))));
    Value zero = floatConst(b, l, 0.0);
    Value integral = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, math::FloorOp::create(b, l, e), e);
    Value half = arith::MulFOp::create(b, l, e, floatConst(b, l, 0.5));
    Value odd = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, math::FloorOp::create(b, l, half), half);
    Value negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, base, zero);
    Value signedValue = arith::SelectOp::create(b, l, arith::AndIOp::create(b, l, integral, odd),
                                                arith::NegFOp::create(b, l, magnitude), magnitude);
    Value r = arith::SelectOp::create(
        b, l, negative,
        arith::SelectOp::create(b, l, integral, signedValue,
                                floatConst(b, l, std::numeric_limits<double>::quiet_NaN())),
        magnitude);
    Value zeroExponent = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, e, zero);
    return arith::SelectOp::create(b, l, zeroExponent, floatConst(b, l, 1.0), r);
  };
  FoldI iop = nullptr;
  if (!floatX && !floatY)
    iop = [](auto &a) { return foldIntegerPower(a[0], a[1]); };
  return convertElementwise(
      ctx, 2, resultType, [](auto &a) { return std::pow(a[0], a[1]); }, iop,
      [=](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value base = a[0], e = a[1];
        if (floatX) {
          if (!floatY)
            e = arith::SIToFPOp::create(b, l, b.getF32Type(), e);
          return floatPower(b, l, base, e);
        }
        // In 64 bits, truncated to X's type: the same wrapped value, whatever Y's width.
        Type t = base.getType(), i64 = b.getI64Type();
        auto narrow = [&](Value v) -> Value {
          return t == i64 ? v : arith::TruncIOp::create(b, l, t, v).getResult();
        };
        if (!floatY)
          return narrow(integerPower(b, l, widenInt(b, l, base, i64, false), widenInt(b, l, e, i64, false)));
        // A float exponent: the integer power where it is integral, else the float power truncated.
        Value n = arith::FPToSIOp::create(b, l, i64, e);
        Value integral = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                               arith::SIToFPOp::create(b, l, e.getType(), n), e);
        Value viaFloat = arith::FPToSIOp::create(
            b, l, t, floatPower(b, l, arith::SIToFPOp::create(b, l, b.getF32Type(), base), e));
        return arith::SelectOp::create(b, l, integral,
                                       narrow(integerPower(b, l, widenInt(b, l, base, i64, false), n)), viaFloat);
      });
}

LogicalResult convertMinMax(NodeContext &ctx, bool isMax) {
  if (ctx.numInputs() == 0)
    return ctx.error() << "needs at least one input";
  if (failed(checkSameTypes(ctx, ctx.numInputs())))
    return failure();
  bool isU = isUnsigned(ctx.input(0).type);
  return convertElementwise(
      ctx, ctx.numInputs(), -1,
      [isMax](auto &a) {
        double r = a[0];
        for (double v : a)
          r = isMax ? std::max(r, v) : std::min(r, v);
        return r;
      },
      [isMax, isU](auto &a) {
        int64_t r = a[0];
        for (int64_t v : a) {
          bool less = isU ? static_cast<uint64_t>(v) < static_cast<uint64_t>(r) : v < r;
          r = (isMax ? !less && v != r : less) ? v : r;
        }
        return r;
      },
      [isMax, isU](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value r = a[0];
        for (Value v : a.drop_front()) {
          if (isF(r))
            r = isMax ? arith::MaximumFOp::create(b, l, r, v).getResult()
                      : arith::MinimumFOp::create(b, l, r, v).getResult();
          else if (isU)
            r = isMax ? arith::MaxUIOp::create(b, l, r, v).getResult()
                      : arith::MinUIOp::create(b, l, r, v).getResult();
          else
            r = isMax ? arith::MaxSIOp::create(b, l, r, v).getResult()
                      : arith::MinSIOp::create(b, l, r, v).getResult();
        }
        return r;
      });
}
LogicalResult convertMax(NodeContext &ctx) { return convertMinMax(ctx, true); }
LogicalResult convertMin(NodeContext &ctx) { return convertMinMax(ctx, false); }

// --- comparisons and logic ------------------------------------------------------------------

// `cmp` compares two elements of either fold type: integers exactly (not through double, which
// makes 2^53 and 2^53 + 1 equal).
template <typename Cmp>
LogicalResult convertCompare(NodeContext &ctx, arith::CmpFPredicate fp, arith::CmpIPredicate ip, Cmp cmp) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  // Unsigned integers compare as such (their folds on the 64 bits as uint64).
  bool isU = isUnsigned(ctx.input(0).type);
  if (isU)
    ip = ip == arith::CmpIPredicate::slt   ? arith::CmpIPredicate::ult
         : ip == arith::CmpIPredicate::sle ? arith::CmpIPredicate::ule
         : ip == arith::CmpIPredicate::sgt ? arith::CmpIPredicate::ugt
         : ip == arith::CmpIPredicate::sge ? arith::CmpIPredicate::uge
                                           : ip;
  return convertElementwise(
      ctx, 2, static_cast<int>(DType::kBool), [cmp](const std::vector<double> &a) -> double { return cmp(a); },
      [cmp, isU](const std::vector<int64_t> &a) -> int64_t {
        if (!isU)
          return cmp(a);
        std::vector<uint64_t> u = {static_cast<uint64_t>(a[0]), static_cast<uint64_t>(a[1])};
        return cmp(u);
      },
      [fp, ip](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value c = isF(a[0]) ? arith::CmpFOp::create(b, l, fp, a[0], a[1]).getResult()
                            : arith::CmpIOp::create(b, l, ip, a[0], a[1]).getResult();
        return toBool(b, l, c);
      });
}
LogicalResult convertEqual(NodeContext &ctx) {
  return convertCompare(ctx, arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
                        [](const auto &a) { return a[0] == a[1]; });
}
LogicalResult convertLess(NodeContext &ctx) {
  return convertCompare(ctx, arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
                        [](const auto &a) { return a[0] < a[1]; });
}
LogicalResult convertGreater(NodeContext &ctx) {
  return convertCompare(ctx, arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
                        [](const auto &a) { return a[0] > a[1]; });
}
LogicalResult convertLessOrEqual(NodeContext &ctx) {
  return convertCompare(ctx, arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
                        [](const auto &a) { return a[0] <= a[1]; });
}
LogicalResult convertGreaterOrEqual(NodeContext &ctx) {
  return convertCompare(ctx, arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
                        [](const auto &a) { return a[0] >= a[1]; });
}

LogicalResult convertLogic(NodeContext &ctx, bool isAnd) {
  for (size_t i = 0; i < 2; ++i)
    if (!ctx.hasInput(i) || ctx.input(i).type != DType::kBool)
      return ctx.error() << "inputs must be bool tensors";
  return convertElementwise(
      ctx, 2, -1, nullptr,
      [isAnd](auto &a) -> int64_t { return isAnd ? (a[0] && a[1]) : (a[0] || a[1]); },
      [isAnd](OpBuilder &b, Location l, ValueRange a) -> Value {
        return isAnd ? arith::AndIOp::create(b, l, a[0], a[1]).getResult()
                     : arith::OrIOp::create(b, l, a[0], a[1]).getResult();
      });
}
LogicalResult convertAnd(NodeContext &ctx) { return convertLogic(ctx, true); }
LogicalResult convertOr(NodeContext &ctx) { return convertLogic(ctx, false); }

LogicalResult convertNot(NodeContext &ctx) {
  if (!ctx.hasInput(0) || ctx.input(0).type != DType::kBool)
    return ctx.error() << "input must be a bool tensor";
  return convertElementwise(
      ctx, 1, -1, nullptr, [](auto &a) -> int64_t { return !a[0]; },
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value one = arith::ConstantOp::create(b, l, b.getI8IntegerAttr(1));
        return arith::XOrIOp::create(b, l, a[0], one);
      });
}

LogicalResult convertWhere(NodeContext &ctx) {
  if (!ctx.hasInput(0) || ctx.input(0).type != DType::kBool)
    return ctx.error() << "condition (input 0) must be a bool tensor";
  if (ctx.numInputs() < 3 || ctx.input(1).type != ctx.input(2).type)
    return ctx.error() << "inputs 1 and 2 must have one element type";
  return convertElementwise(
      ctx, 3, static_cast<int>(ctx.input(1).type),
      [](auto &a) { return a[0] != 0 ? a[1] : a[2]; }, [](auto &a) { return a[0] ? a[1] : a[2]; },
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::SelectOp::create(b, l, fromBool(b, l, a[0]), a[1], a[2]);
      });
}

// --- unary float ops -----------------------------------------------------------------------

LogicalResult convertSqrt(NodeContext &ctx) { return convertMathUnary<math::SqrtOp>(ctx, std::sqrt); }
LogicalResult convertExp(NodeContext &ctx) { return convertMathUnary<math::ExpOp>(ctx, std::exp); }
LogicalResult convertLog(NodeContext &ctx) { return convertMathUnary<math::LogOp>(ctx, std::log); }
LogicalResult convertTanh(NodeContext &ctx) { return convertMathUnary<math::TanhOp>(ctx, std::tanh); }
LogicalResult convertErf(NodeContext &ctx) { return convertMathUnary<math::ErfOp>(ctx, std::erf); }
LogicalResult convertFloor(NodeContext &ctx) { return convertMathUnary<math::FloorOp>(ctx, std::floor); }
LogicalResult convertCeil(NodeContext &ctx) { return convertMathUnary<math::CeilOp>(ctx, std::ceil); }

LogicalResult convertAbs(NodeContext &ctx) {
  if (!isFloat(ctx.input(0).type))
    return convertElementwise(ctx, 1, -1, nullptr, [](auto &a) {
                                // Wrapping, as the run-time absi: |INT64_MIN| is INT64_MIN.
                                return a[0] < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a[0])) : a[0];
                              },
                              [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                return math::AbsIOp::create(b, l, a[0]);
                              });
  return convertMathUnary<math::AbsFOp>(ctx, std::fabs);
}

LogicalResult convertNeg(NodeContext &ctx) {
  return convertElementwise(ctx, 1, -1, [](auto &a) { return -a[0]; },
                            [](auto &a) { return wrapping(int64_t(0), a[0], std::minus<>()); },
                            [](OpBuilder &b, Location l, ValueRange a) -> Value {
                              if (isF(a[0]))
                                return arith::NegFOp::create(b, l, a[0]);
                              Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(a[0].getType(), 0));
                              return arith::SubIOp::create(b, l, zero, a[0]);
                            });
}

LogicalResult convertReciprocal(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return 1.0 / a[0]; },
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::DivFOp::create(b, l, floatConst(b, l, 1.0), a[0]);
                      });
}

LogicalResult convertRelu(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return a[0] > 0 ? a[0] : 0.0; },
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(b, l, a[0], floatConst(b, l, 0.0));
                      });
}

LogicalResult convertLeakyRelu(NodeContext &ctx) {
  double alpha = ctx.attrFloat("alpha", 0.01f);
  return convertUnary(ctx, [alpha](auto &a) { return a[0] >= 0 ? a[0] : alpha * a[0]; },
                      [alpha](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value scaled = arith::MulFOp::create(b, l, a[0], floatConst(b, l, alpha));
                        Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, a[0],
                                                          floatConst(b, l, 0.0));
                        return arith::SelectOp::create(b, l, pos, a[0], scaled);
                      });
}

Value sigmoidScalar(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  Value one = floatConst(b, l, 1.0);
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

LogicalResult convertSigmoid(NodeContext &ctx) {
  return convertUnary(ctx, [](auto &a) { return 1.0 / (1.0 + std::exp(-a[0])); },
                      [](OpBuilder &b, Location l, ValueRange a) { return sigmoidScalar(b, l, a[0]); });
}

Value clampScalar(OpBuilder &b, Location l, Value x, double lo, double hi) {
  Value r = arith::MaximumFOp::create(b, l, x, floatConst(b, l, lo));
  return arith::MinimumFOp::create(b, l, r, floatConst(b, l, hi));
}

LogicalResult convertHardSigmoid(NodeContext &ctx) {
  double alpha = ctx.attrFloat("alpha", 0.2f), beta = ctx.attrFloat("beta", 0.5f);
  return convertUnary(ctx,
                      [=](auto &a) { return std::min(1.0, std::max(0.0, alpha * a[0] + beta)); },
                      [=](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value y = arith::MulFOp::create(b, l, a[0], floatConst(b, l, alpha));
                        y = arith::AddFOp::create(b, l, y, floatConst(b, l, beta));
                        return clampScalar(b, l, y, 0.0, 1.0);
                      });
}

LogicalResult convertHardSwish(NodeContext &ctx) {
  // x * relu6(x + 3) / 6, in PyTorch's order of operations.
  return convertUnary(ctx, [](auto &a) { return a[0] * std::min(6.0, std::max(0.0, a[0] + 3)) / 6; },
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value y = arith::AddFOp::create(b, l, a[0], floatConst(b, l, 3.0));
                        y = clampScalar(b, l, y, 0.0, 6.0);
                        y = arith::MulFOp::create(b, l, a[0], y);
                        return arith::DivFOp::create(b, l, y, floatConst(b, l, 6.0));
                      });
}

LogicalResult convertClip(NodeContext &ctx) {
  double lo = -INFINITY, hi = INFINITY;
  std::optional<int64_t> loInt, hiInt;  // integer x: its bounds exactly
  for (size_t i : {1, 2})
    if (ctx.hasInput(i) && ctx.input(i).type != ctx.input(0).type)
      return ctx.error() << (i == 1 ? "min" : "max") << " (input " << i << ") is " << dtypeName(ctx.input(i).type)
                         << " and x " << dtypeName(ctx.input(0).type) << "; Clip takes bounds of x's type";
  if (ctx.hasInput(1)) {
    auto t = ctx.requireScalar(1, "min");
    if (failed(t))
      return failure();
    lo = t->asDouble(0);
    loInt = t->asInt(0);
  }
  if (ctx.hasInput(2)) {
    auto t = ctx.requireScalar(2, "max");
    if (failed(t))
      return failure();
    hi = t->asDouble(0);
    hiInt = t->asInt(0);
  }
  if (!isFloat(ctx.input(0).type))
    return convertElementwise(
        ctx, 1, -1, nullptr,
        [=](auto &a) {
          int64_t r = a[0];
          if (loInt)
            r = std::max(*loInt, r);
          return hiInt ? std::min(*hiInt, r) : r;
        },
        [=](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[0].getType();
          Value r = a[0];
          if (loInt)
            r = arith::MaxSIOp::create(b, l, r, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, *loInt)));
          if (hiInt)
            r = arith::MinSIOp::create(b, l, r, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, *hiInt)));
          return r;
        });
  return convertElementwise(ctx, 1, -1, [=](auto &a) { return std::min(hi, std::max(lo, a[0])); },
                            nullptr, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
                              Value r = a[0];
                              if (std::isfinite(lo))
                                r = arith::MaximumFOp::create(b, l, r, floatConst(b, l, lo));
                              if (std::isfinite(hi))
                                r = arith::MinimumFOp::create(b, l, r, floatConst(b, l, hi));
                              return r;
                            });
}

// BitShift on unsigned integers: a shift by the width or more gives 0.
LogicalResult convertBitShift(NodeContext &ctx) {
  if (failed(checkSameTypes(ctx, 2)))
    return failure();
  if (!isUnsigned(ctx.input(0).type))
    return ctx.error() << "input 0 has element type " << dtypeName(ctx.input(0).type)
                       << "; BitShift takes unsigned integer tensors";
  std::string direction = ctx.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.error() << "direction '" << direction << "' is not LEFT or RIGHT";
  bool left = direction == "LEFT";
  DType type = ctx.input(0).type;
  int64_t width = elementBytes(type) * 8;
  return convertElementwise(
      ctx, 2, -1, nullptr,
      [left, width](auto &a) -> int64_t {
        uint64_t x = static_cast<uint64_t>(a[0]), n = static_cast<uint64_t>(a[1]);
        if (n >= static_cast<uint64_t>(width))
          return 0;
        return static_cast<int64_t>(left ? x << n : x >> n);
      },
      [left, width](OpBuilder &b, Location l, ValueRange a) -> Value {
        Type t = a[0].getType();
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
        Value tooFar = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, a[1],
                                             arith::ConstantOp::create(b, l, b.getIntegerAttr(t, width)));
        Value amount = arith::SelectOp::create(b, l, tooFar, zero, a[1]);
        Value r = left ? arith::ShLIOp::create(b, l, a[0], amount).getResult()
                       : arith::ShRUIOp::create(b, l, a[0], amount).getResult();
        return arith::SelectOp::create(b, l, tooFar, zero, r);
      });
}

// The DType's own ONNX type (the one a float value has unless its onnxType says otherwise).
int32_t onnxTypeOf(DType t) {
  switch (t) {
  case DType::kFloat: return onnx::TensorProto::FLOAT;
  case DType::kInt64: return onnx::TensorProto::INT64;
  case DType::kInt32: return onnx::TensorProto::INT32;
  case DType::kBool: return onnx::TensorProto::BOOL;
  case DType::kInt8: return onnx::TensorProto::INT8;
  case DType::kUInt8: return onnx::TensorProto::UINT8;
  case DType::kInt16: return onnx::TensorProto::INT16;
  case DType::kUInt16: return onnx::TensorProto::UINT16;
  case DType::kUInt32: return onnx::TensorProto::UINT32;
  case DType::kUInt64: return onnx::TensorProto::UINT64;
  }
  return onnx::TensorProto::UNDEFINED;
}

// Cast of input 0 to ONNX type `to`. float16 and bfloat16 results are f32 values rounded to
// that precision (the graph computes in f32); double is f32.
LogicalResult castInput(NodeContext &ctx, int64_t to) {
  DType target;
  if (!dtypeFromOnnx(static_cast<int32_t>(to), target))
    return ctx.error() << "cast to " << onnxTypeName(static_cast<int32_t>(to))
                       << " is not supported (float, float16, bfloat16, double, the integers and bool)";
  bool half = to == onnx::TensorProto::FLOAT16 || to == onnx::TensorProto::BFLOAT16;
  bool bf16 = to == onnx::TensorProto::BFLOAT16;
  int32_t onnxType = half || to == onnx::TensorProto::DOUBLE ? static_cast<int32_t>(to) : 0;
  const OnnxValue &x = ctx.input(0);
  if (x.isConstant()) {
    HostTensor t = castTo(*x.constant, target);
    if (half)
      for (float &v : t.f)
        v = roundToHalf(v, bf16);
    OnnxValue out = OnnxValue::ofConstant(std::move(t));
    out.onnxType = onnxType;
    ctx.setOutput(0, out);
    return success();
  }
  DType from = x.type;
  unsigned fromWidth = elementType(ctx.b.getContext(), from).getIntOrFloatBitWidth();
  unsigned toWidth = elementType(ctx.b.getContext(), target).getIntOrFloatBitWidth();
  bool sameBits = from == target || (!isFloat(from) && !isFloat(target) && from != DType::kBool &&
                                     target != DType::kBool && fromWidth == toWidth);
  if (sameBits && !half) {  // int8 <-> uint8, int32 <-> uint32, ...: the same bits, as NumPy
    OnnxValue same = x;
    same.type = target;
    same.onnxType = onnxType;
    ctx.setOutput(0, same);
    return success();
  }
  auto result = elementwise(ctx, {&x}, target, [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    Type et = elementType(b.getContext(), target);
    Value v = a[0];
    if (target == DType::kBool) {
      Value c = isF(v) ? arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, v, floatConst(b, l, 0)).getResult()
                       : arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, v,
                                               arith::ConstantOp::create(b, l, b.getIntegerAttr(v.getType(), 0))).getResult();
      return toBool(b, l, c);
    }
    bool unsignedFrom = from == DType::kBool || isUnsigned(from);
    if (isFloat(from) && isFloat(target))
      return half ? decodeHalf(b, l, encodeHalf(b, l, v, bf16), bf16) : v;
    if (isFloat(from)) {
      // To 8 and 16 bits through int32 (NumPy's float -> int8 wraps what fits int32), uint32
      // through int64; uint64 from 2^63 up through the difference.
      if (toWidth < 32)
        return arith::TruncIOp::create(b, l, et, arith::FPToSIOp::create(b, l, b.getI32Type(), v));
      if (target == DType::kUInt32)
        return arith::TruncIOp::create(b, l, et, arith::FPToSIOp::create(b, l, b.getI64Type(), v));
      if (target == DType::kUInt64) {
        Value big = floatConst(b, l, 9223372036854775808.0);
        Value high = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, v, big);
        Value shifted = arith::XOrIOp::create(
            b, l, arith::FPToSIOp::create(b, l, et, arith::SubFOp::create(b, l, v, big)),
            arith::ConstantIntOp::create(b, l, INT64_MIN, 64));
        return arith::SelectOp::create(b, l, high, shifted, arith::FPToSIOp::create(b, l, et, v));
      }
      return arith::FPToSIOp::create(b, l, et, v);
    }
    if (isFloat(target)) {
      Value f = unsignedFrom ? arith::UIToFPOp::create(b, l, et, v).getResult()
                             : arith::SIToFPOp::create(b, l, et, v).getResult();
      return half ? decodeHalf(b, l, encodeHalf(b, l, f, bf16), bf16) : f;
    }
    if (fromWidth == toWidth)
      return v;
    if (fromWidth > toWidth)
      return arith::TruncIOp::create(b, l, et, v);
    return widenInt(b, l, v, et, unsignedFrom);
  });
  if (failed(result))
    return failure();
  result->onnxType = onnxType;
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult convertCast(NodeContext &ctx) { return castInput(ctx, ctx.attrInt("to", 0)); }

// CastLike: Cast to the type of input 1 (float16, bfloat16 and double where known as such).
LogicalResult convertCastLike(NodeContext &ctx) {
  const OnnxValue &like = ctx.input(1);
  return castInput(ctx, like.onnxType ? like.onnxType : onnxTypeOf(like.type));
}

} // namespace

void addElementwiseOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"Abs", 13, 21, convertAbs, "", "", 1},
      {"Add", 13, 21, convertAdd, "", "", 2, nullptr, true},
      {"And", 13, 21, convertAnd, "", "", 2},
      {"Cast", 13, 21, convertCast, "float16, bfloat16 and double are computed as float", "saturate to", 1, nullptr, true},
      {"CastLike", 15, 21, convertCastLike, "float16, bfloat16 and double are computed as float", "saturate", 2, nullptr, true},
      {"BitShift", 13, 21, convertBitShift, "unsigned integers", "direction", 2, nullptr, true},
      {"Ceil", 13, 21, convertCeil, "", "", 1},
      {"Clip", 13, 21, convertClip, "min and max known at compile time", "", 1},
      {"Div", 13, 21, convertDiv, "integer division by 0 gives 0, MIN / -1 gives MIN", "", 2, nullptr, true},
      {"Equal", 13, 21, convertEqual, "", "", 2, nullptr, true},
      {"Erf", 13, 21, convertErf, "", "", 1},
      {"Exp", 13, 21, convertExp, "", "", 1},
      {"Floor", 13, 21, convertFloor, "", "", 1},
      {"Greater", 13, 21, convertGreater, "", "", 2, nullptr, true},
      {"GreaterOrEqual", 13, 21, convertGreaterOrEqual, "", "", 2, nullptr, true},
      {"HardSigmoid", 13, 21, convertHardSigmoid, "", "alpha beta", 1},
      {"HardSwish", 14, 21, convertHardSwish, "", "", 1},
      {"LeakyRelu", 13, 21, convertLeakyRelu, "", "alpha", 1},
      {"Less", 13, 21, convertLess, "", "", 2, nullptr, true},
      {"LessOrEqual", 13, 21, convertLessOrEqual, "", "", 2, nullptr, true},
      {"Log", 13, 21, convertLog, "", "", 1},
      {"Max", 13, 21, convertMax, "", "", -1, nullptr, true},
      {"Min", 13, 21, convertMin, "", "", -1, nullptr, true},
      {"Mul", 13, 21, convertMul, "", "", 2, nullptr, true},
      {"Neg", 13, 21, convertNeg, "", "", 1},
      {"Not", 13, 21, convertNot, "", "", 1},
      {"Or", 13, 21, convertOr, "", "", 2},
      {"Pow", 13, 21, convertPow, "float and signed integer tensors", "", 2, nullptr, true},
      {"Reciprocal", 13, 21, convertReciprocal, "", "", 1},
      {"Relu", 13, 21, convertRelu, "", "", 1},
      {"Sigmoid", 13, 21, convertSigmoid, "", "", 1},
      {"Sqrt", 13, 21, convertSqrt, "", "", 1},
      {"Sub", 13, 21, convertSub, "", "", 2, nullptr, true},
      {"Tanh", 13, 21, convertTanh, "", "", 1},
      {"Where", 13, 21, convertWhere, "", "", 3, nullptr, true},
  });
}

} // namespace hexir::onnx_import

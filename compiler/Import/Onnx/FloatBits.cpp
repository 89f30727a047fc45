//===- FloatBits.cpp - 16-bit floats as their bits ------------------------===//
#include "Import/Onnx/FloatBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "base/half.h"

using namespace mlir;

namespace hexir::onnx_import {

float halfToFloat(uint16_t h, bool bf16) { return bf16 ? ::hexir::Bf16BitsToFloat(h) : ::hexir::HalfBitsToFloat(h); }

uint16_t floatToHalf(float v, bool bf16) {
  if (bf16)
    return ::hexir::FloatToBf16Bits(v);
  uint32_t f = ::hexir::FloatBits(v);
  uint32_t sign = (f >> 16) & 0x8000, a = f & 0x7fffffffu;
  if (a > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00);
  if (a >= 0x477ff000u)  // rounds past 65504: infinity
    return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half (or 0), m * 2^-24 rounded to even
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;
    if (shift > 24)
      return static_cast<uint16_t>(sign);
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = a + 0xc8000fffu + ((a >> 13) & 1);  // rebias the exponent (-112 << 23), round to even
  return static_cast<uint16_t>(sign | (r >> 13));
}

Value decodeHalf(OpBuilder &b, Location l, Value bits, bool bf16) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](uint32_t v) -> Value { return arith::ConstantIntOp::create(b, l, static_cast<int32_t>(v), 32); };
  Value u = arith::ExtUIOp::create(b, l, i32, bits);
  if (bf16)
    return arith::BitcastOp::create(b, l, f32, arith::ShLIOp::create(b, l, u, c(16)));
  Value sign = arith::ShLIOp::create(b, l, arith::AndIOp::create(b, l, u, c(0x8000)), c(16));
  Value exp = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, u, c(10)), c(0x1f));
  Value mant = arith::AndIOp::create(b, l, u, c(0x3ff));
  Value mantHigh = arith::ShLIOp::create(b, l, mant, c(13));
  Value normal = arith::OrIOp::create(
      b, l, sign, arith::OrIOp::create(b, l, arith::ShLIOp::create(b, l, arith::AddIOp::create(b, l, exp, c(112)), c(23)),
                                       mantHigh));
  Value special = arith::OrIOp::create(b, l, sign, arith::OrIOp::create(b, l, c(0x7f800000u), mantHigh));
  Value isSpecial = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, c(31));
  Value isSmall = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, c(0));
  // A subnormal: mant * 2^-24 exactly (mant < 2^10), signed by or-ing the sign bit.
  Value small = arith::MulFOp::create(b, l, arith::UIToFPOp::create(b, l, f32, mant),
                                      arith::ConstantOp::create(b, l, b.getF32FloatAttr(5.9604644775390625e-8f)));
  Value smallBits = arith::OrIOp::create(b, l, arith::BitcastOp::create(b, l, i32, small), sign);
  Value r = arith::SelectOp::create(b, l, isSpecial, special, normal);
  r = arith::SelectOp::create(b, l, isSmall, smallBits, r);
  return arith::BitcastOp::create(b, l, f32, r);
}

Value encodeHalf(OpBuilder &b, Location l, Value f, bool bf16) {
  Type i32 = b.getI32Type(), i16 = b.getI16Type();
  auto c = [&](uint32_t v) -> Value { return arith::ConstantIntOp::create(b, l, static_cast<int32_t>(v), 32); };
  auto ult = [&](Value x, Value y) { return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, x, y); };
  auto ugt = [&](Value x, Value y) { return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, x, y); };
  Value u = arith::BitcastOp::create(b, l, i32, f);
  Value a = arith::AndIOp::create(b, l, u, c(0x7fffffffu));
  Value isNaN = ugt(a, c(0x7f800000u));
  if (bf16) {
    Value lsb = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, u, c(16)), c(1));
    Value rounded = arith::ShRUIOp::create(
        b, l, arith::AddIOp::create(b, l, arith::AddIOp::create(b, l, u, c(0x7fffu)), lsb), c(16));
    Value nan = arith::OrIOp::create(b, l, arith::ShRUIOp::create(b, l, u, c(16)), c(0x40));
    return arith::TruncIOp::create(b, l, i16, arith::SelectOp::create(b, l, isNaN, nan, rounded));
  }
  Value sign = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, u, c(16)), c(0x8000));
  // Normal: rebias and round to even.
  Value lsb = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, a, c(13)), c(1));
  Value normal = arith::ShRUIOp::create(
      b, l, arith::AddIOp::create(b, l, arith::AddIOp::create(b, l, a, c(0xc8000fffu)), lsb), c(13));
  // Subnormal: the mantissa with its implicit 1 shifted right by 126 - e (at most 31: past 24 it
  // rounds to 0 anyway), rounded to even.
  Value e = arith::ShRUIOp::create(b, l, a, c(23));
  Value m = arith::OrIOp::create(b, l, arith::AndIOp::create(b, l, a, c(0x7fffffu)), c(0x800000u));
  Value shift = arith::MinUIOp::create(b, l, arith::SubIOp::create(b, l, c(126), e), c(31));
  Value q = arith::ShRUIOp::create(b, l, m, shift);
  Value rem = arith::AndIOp::create(b, l, m, arith::SubIOp::create(b, l, arith::ShLIOp::create(b, l, c(1), shift), c(1)));
  Value half = arith::ShLIOp::create(b, l, c(1), arith::SubIOp::create(b, l, shift, c(1)));
  Value qOdd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, arith::AndIOp::create(b, l, q, c(1)), c(0));
  Value tie = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, rem, half);
  Value up = arith::OrIOp::create(b, l, ugt(rem, half), arith::AndIOp::create(b, l, tie, qOdd));
  Value sub = arith::AddIOp::create(b, l, q, arith::ExtUIOp::create(b, l, i32, up));
  Value r = arith::SelectOp::create(b, l, ult(a, c(0x38800000u)), sub, normal);
  r = arith::SelectOp::create(b, l, ult(a, c(0x477ff000u)), r, c(0x7c00));
  r = arith::SelectOp::create(b, l, isNaN, c(0x7e00), r);
  return arith::TruncIOp::create(b, l, i16, arith::OrIOp::create(b, l, r, sign));
}

} // namespace hexir::onnx_import

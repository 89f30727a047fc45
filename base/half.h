// 16-bit floats (IEEE binary16 and bfloat16) as their bits, for the constants an executable
// stores narrow and the runtime widens to f32 at load. Integer arithmetic only: exact, and no
// F16C or compiler half type needed.
#ifndef HEXIR_BASE_HALF_H_
#define HEXIR_BASE_HALF_H_

#include <cstdint>
#include <cstring>

namespace hexir {

enum class NarrowFloat : uint8_t { kF16 = 0, kBf16 = 1 };

inline uint32_t FloatBits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

inline float FloatOfBits(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

// The float a binary16 holds (every one is a float, subnormals included).
inline float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return FloatOfBits(sign | 0x7f800000u | (mant << 13));
  return FloatOfBits(sign | ((exp + 112) << 23) | (mant << 13));
}

inline float Bf16BitsToFloat(uint16_t h) { return FloatOfBits(static_cast<uint32_t>(h) << 16); }

// `f` rounded to the nearest bfloat16, ties to even; a NaN stays a (quiet) NaN.
inline uint16_t FloatToBf16Bits(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

inline float NarrowBitsToFloat(uint16_t h, NarrowFloat format) {
  return format == NarrowFloat::kF16 ? HalfBitsToFloat(h) : Bf16BitsToFloat(h);
}

// Whether `v` is exactly a binary16 value, whose bits go to `*bits`. NaNs never are (a payload
// need not survive the round trip), nor f32 subnormals.
inline bool ExactHalf(float v, uint16_t* bits) {
  uint32_t f = FloatBits(v), sign = (f >> 16) & 0x8000, a = f & 0x7fffffffu;
  if (a == 0 || a == 0x7f800000u) {
    *bits = static_cast<uint16_t>(sign | (a ? 0x7c00 : 0));
    return true;
  }
  if (a > 0x7f800000u) return false;
  int32_t e = static_cast<int32_t>(a >> 23) - 127;
  uint32_t m = a & 0x7fffffu;
  if (e > 15 || e < -24) return false;
  if (e >= -14) {  // a normal half: the low 13 mantissa bits must be 0
    if (m & 0x1fffu) return false;
    *bits = static_cast<uint16_t>(sign | static_cast<uint32_t>(e + 15) << 10 | (m >> 13));
    return true;
  }
  // A subnormal half q * 2^-24: (1.m) 2^e = (m | 2^23) 2^(e - 23), so q = (m | 2^23) >> -(e + 1).
  uint32_t full = m | 0x800000u, shift = static_cast<uint32_t>(-(e + 1));
  if (full & ((1u << shift) - 1)) return false;
  *bits = static_cast<uint16_t>(sign | (full >> shift));
  return true;
}

// Whether `v` is exactly a bfloat16 value (its low 16 bits are 0; not a NaN).
inline bool ExactBf16(float v, uint16_t* bits) {
  uint32_t f = FloatBits(v);
  if ((f & 0xffffu) != 0 || (f & 0x7fffffffu) > 0x7f800000u) return false;
  *bits = static_cast<uint16_t>(f >> 16);
  return true;
}

}  // namespace hexir

#endif  // HEXIR_BASE_HALF_H_

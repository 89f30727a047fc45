#include "base/half.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

namespace hexir {
namespace {

#ifdef __FLT16_MAX__
// The compiler's own binary16 is the reference.
float Reference(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}

TEST_CASE("every binary16 widens as the compiler's _Float16 does and is exact", "[half]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float want = Reference(static_cast<uint16_t>(h)), got = HalfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      uint16_t bits;
      CHECK_FALSE(ExactHalf(got, &bits));
      continue;
    }
    REQUIRE(FloatBits(got) == FloatBits(want));
    uint16_t bits = 0;
    REQUIRE(ExactHalf(got, &bits));
    CHECK(bits == h);
  }
}

TEST_CASE("a float is exact in binary16 only when the round trip keeps its bits", "[half]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns, and floats near the binary16 range with few mantissa bits.
    uint32_t u = any(rng);
    if (i % 2) u = (u & 0x8fffe000u) | 0x30000000u;
    float v = FloatOfBits(u);
    if (std::isnan(v)) continue;
    _Float16 h = static_cast<_Float16>(v);
    bool roundTrips = FloatBits(static_cast<float>(h)) == u;
    uint16_t bits = 0;
    CHECK(ExactHalf(v, &bits) == roundTrips);
  }
}
#endif

TEST_CASE("bfloat16 is the high half of a float", "[half]") {
  uint16_t bits = 0;
  CHECK(ExactBf16(1.5f, &bits));
  CHECK(bits == 0x3fc0);
  CHECK(Bf16BitsToFloat(bits) == 1.5f);
  CHECK_FALSE(ExactBf16(1.0f + 1.0f / 1024, &bits));  // mantissa bit 13: not in 7 bits
  CHECK_FALSE(ExactBf16(std::nanf(""), &bits));
  CHECK(ExactBf16(-INFINITY, &bits));
  CHECK(bits == 0xff80);
}

}  // namespace
}  // namespace hexir

// 16-bit float conversions against the compiler's own _Float16 (the hardware's or compiler-rt's
// conversions, not this code) and bfloat16's definition (the high half of a float32).
#include "Import/Onnx/FloatBits.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

namespace hexir::onnx_import {
namespace {

uint16_t bitsOf(_Float16 h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

TEST_CASE("every float16 decodes to the float _Float16 holds", "[floatbits]") {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    _Float16 h;
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(&h, &b, 2);
    float want = static_cast<float>(h), got = halfToFloat(b, false);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got));
      continue;
    }
    REQUIRE(std::memcmp(&want, &got, 4) == 0);  // -0 included
  }
}

TEST_CASE("floats round to float16 as _Float16 rounds them (nearest, ties to even)", "[floatbits]") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> any;
  auto check = [](float f) {
    _Float16 h = static_cast<_Float16>(f);
    if (std::isnan(f))
      REQUIRE(std::isnan(halfToFloat(floatToHalf(f, false), false)));
    else
      REQUIRE(floatToHalf(f, false) == bitsOf(h));
  };
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = any(rng);
    float f;
    std::memcpy(&f, &u, 4);
    check(f);
  }
  // The edges: ties at every exponent, subnormals, the largest finite, overflow, zeros.
  for (uint32_t e = 100; e < 145; ++e)
    for (uint32_t m : {0x0u, 0x1000u, 0x1001u, 0xfffu, 0x3000u, 0x2000u, 0x7fffffu, 0x7fe000u, 0x7ff000u})
      for (uint32_t s : {0u, 0x80000000u}) {
        uint32_t u = s | (e << 23) | m;
        float f;
        std::memcpy(&f, &u, 4);
        check(f);
      }
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 2.99e-8f, INFINITY, -INFINITY, NAN})
    check(f);
}

TEST_CASE("bfloat16 is the high half of a float32, rounded to nearest even", "[floatbits]") {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint32_t u = bits << 16;
    float want;
    std::memcpy(&want, &u, 4);
    float got = halfToFloat(static_cast<uint16_t>(bits), true);
    REQUIRE((std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, 4) == 0));
  }
  auto bf16 = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return floatToHalf(f, true);
  };
  CHECK(bf16(0x3f808000u) == 0x3f80);  // a tie to the even 0x3f80
  CHECK(bf16(0x3f818000u) == 0x3f82);  // a tie to the even 0x3f82
  CHECK(bf16(0x3f808001u) == 0x3f81);  // above the tie
  CHECK(bf16(0x7f7fffffu) == 0x7f80);  // the largest float rounds to infinity
  CHECK((bf16(0x7fc00001u) & 0x7fc0) == 0x7fc0);  // NaN stays NaN
  CHECK(bf16(0xff800000u) == 0xff80);
}

} // namespace
} // namespace hexir::onnx_import

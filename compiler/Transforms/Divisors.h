//===- Divisors.h - tile sizes that divide their extent ---------*- C++ -*-===//
//
// Every target tiles static shapes with tiles that divide them exactly (no masks, no
// remainders): these are the divisors they pick from.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_DIVISORS_H
#define HEXIR_COMPILER_TRANSFORMS_DIVISORS_H

#include <algorithm>
#include <cstdint>

namespace mlir::hexir {

// The largest divisor of `n` that is at most `cap` (1 if nothing else divides).
inline int64_t largestDivisorAtMost(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

// The smallest divisor of `n` that is at least `atLeast` (n itself at most).
inline int64_t divisorAtLeast(int64_t n, int64_t atLeast) {
  for (int64_t d = std::max<int64_t>(atLeast, 1); d < n; ++d)
    if (n % d == 0)
      return d;
  return n;
}

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_DIVISORS_H

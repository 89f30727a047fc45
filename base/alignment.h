// Alignment arithmetic shared by the planner, the serializer and the runtime.
#pragma once

#include <cstdint>

namespace hexir {

constexpr bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Rounds `value` up to a multiple of `alignment` (a power of two).
constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

constexpr bool IsAligned(uint64_t value, uint64_t alignment) { return (value & (alignment - 1)) == 0; }

inline bool IsPointerAligned(const void* p, uint64_t alignment) {
  return IsAligned(reinterpret_cast<uintptr_t>(p), alignment);
}

// Overflow-checked a + b <= limit, for validating untrusted (offset, length) pairs.
constexpr bool RangeWithin(uint64_t offset, uint64_t length, uint64_t limit) {
  return offset <= limit && length <= limit - offset;
}

}  // namespace hexir

// Helpers shared by the planner's tests.
#pragma once

#include "planner/problem.h"

namespace hexir::planner::testing {

// A buffer of `size` bytes live over steps [first, last].
inline BufferRequest Buf(uint64_t size, int64_t first, int64_t last, uint64_t align = 1) {
  BufferRequest b;
  b.size = size;
  b.alignment = align;
  b.first = first;
  b.last = last;
  return b;
}

}  // namespace hexir::planner::testing

// The max-load lower bound: for each space, the largest total size of buffers live at one step.
// No plan can use less memory (alignment padding aside), so solvers are judged against it.
// O(n log n) sweep over interval endpoints.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/problem.h"

namespace hexir::planner {

// Per-space lower bound in bytes, indexed by space.
std::vector<uint64_t> MaxLoadLowerBound(const Problem& problem);

}  // namespace hexir::planner

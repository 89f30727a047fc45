// A solution to a planner::Problem: one offset per buffer and the size of each space's arena.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <vector>

namespace hexir::planner {

struct Plan {
  std::vector<uint64_t> offsets;      // parallel to Problem::buffers
  std::vector<uint64_t> space_sizes;  // arena bytes per memory space (max offset + size)
};

}  // namespace hexir::planner

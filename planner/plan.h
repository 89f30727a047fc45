// A solution to a planner::Problem: one offset per buffer and the size of each space's arena.
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hexir::planner {

struct Plan {
  std::vector<uint64_t> offsets;      // parallel to Problem::buffers
  std::vector<uint64_t> space_sizes;  // arena bytes per memory space (max offset + size)
  // Per buffer: the buffer whose memory it took over (an honoured may_share_with hint), or -1.
  // Empty means no sharing.
  std::vector<int64_t> shared_with;

  int64_t shared(size_t i) const { return i < shared_with.size() ? shared_with[i] : -1; }
};

}  // namespace hexir::planner

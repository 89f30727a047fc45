// The static allocation problem, free of any IR: buffers with a size, an alignment, a live
// interval over the dispatch schedule and a memory space. Solvers map it to offsets (plan.h);
// the verifier (verifier.h) checks any plan independently of the solver that made it.
//
// Usage:
//   planner::Problem p;
//   p.buffers.push_back({/*size=*/256, /*alignment=*/64, /*first=*/0, /*last=*/2});
//   StatusOr<planner::Plan> plan = planner::SolveBestFit(p);
//   HEXIR_RETURN_IF_ERROR(planner::Verify(p, *plan));
//
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hexir::planner {

struct BufferRequest {
  uint64_t size = 0;       // bytes; a zero-size buffer gets offset 0 and conflicts with nothing
  uint64_t alignment = 1;  // a power of two
  // Live over schedule steps [first, last], inclusive: written at `first`, last read at `last`.
  int64_t first = 0;
  int64_t last = 0;
  uint32_t space = 0;  // memory space; each space is its own arena
  // A hint: this buffer may take over the memory of buffer `may_share_with` (an index into
  // Problem::buffers), as an elementwise kernel writes its output into a dying input. Honoured
  // when that buffer dies at the step this one is born, and both have the same size and space;
  // then both get the same offset. -1: no hint.
  int64_t may_share_with = -1;
  std::string name;  // for messages and dumps only
};

struct Problem {
  std::vector<BufferRequest> buffers;
  // Per-space capacity in bytes; 0 or a missing entry means unbounded.
  std::vector<uint64_t> capacities;

  uint32_t num_spaces() const;
  uint64_t capacity(uint32_t space) const {
    return space < capacities.size() ? capacities[space] : 0;
  }
};

// True when the two buffers are live at a common step.
inline bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace hexir::planner

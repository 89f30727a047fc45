// Exact search for a packing under a capacity, in the spirit of MiniMalloc (Moffitt, ASPLOS
// 2023): a depth-first search over canonical solutions.
//
// Canonical solutions: sort any valid packing by offset and drop each buffer as low as the
// buffers before it allow ("gravity"); nothing rises, so some optimal packing is found among
// orders in which buffers are placed at non-decreasing offsets, each at its gravity offset.
// The search places one buffer per level and keeps a global floor (the last offset used):
//  - branching: the unplaced buffers whose gravity offset is at or above the floor, ordered
//    by it (ties: a static preorder); equal offsets only in preorder, identical buffers in
//    index order;
//  - dominance: a placement that leaves room below the floor for an unplaced buffer to rest
//    in is skipped (that buffer belongs there, in a sibling branch);
//  - pruning: in every time section, max(height, floor) + sizes still to place there must fit
//    the capacity. This bound only grows with the offset chosen, so the candidate loop stops at
//    the first candidate that fails it. Checking it is O(log S) per candidate after an
//    O(S log S) step per node (S = time sections).
//  - decomposition: once the unplaced buffers split into groups that share no time section,
//    each group is solved alone, so a failure in one never re-explores the others;
//  - restarts: several static preorders run round-robin under a doubling node limit.
// Worst case exponential; runs under a deadline and reports a timeout. One memory space at a
// time; may_share_with hints are resolved before (sharing.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "planner/problem.h"

namespace hexir::planner {

enum class SearchOutcome { kFound, kInfeasible, kTimeout, kNodeLimit };

struct SearchResult {
  SearchOutcome outcome = SearchOutcome::kInfeasible;
  std::vector<uint64_t> offsets;  // when found: per buffer of the problem
  uint64_t nodes = 0;             // search nodes visited
};

struct SearchOptions {
  // Total search nodes before giving up (0: only the deadline). A node budget, unlike a
  // deadline, gives the same answer on every run: the compiler uses it so that compiling
  // twice gives the same bytes.
  uint64_t max_nodes = 0;
  // Workers of a parallel portfolio (different orders on different threads; the first
  // definite answer wins). More than 1 makes the result depend on timing.
  int threads = 1;
};

// Packs all buffers of `problem` (one space; `space` fields ignored) under `capacity` bytes.
SearchResult SearchExact(const Problem& problem, uint64_t capacity,
                         std::chrono::steady_clock::time_point deadline, const SearchOptions& options = {});

}  // namespace hexir::planner

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
//  - dominance: a candidate at or above the top of some unplaced buffer resting at its
//    gravity is skipped (that buffer fits below it in space no later placement can use, so
//    it belongs there, placed first); a buffer resting below the floor with no unplaced
//    buffer overlapping it in time (nothing can lift it) ends the branch;
//  - hat-less pruning (as MiniMalloc): when a candidate that raised no unplaced buffer's
//    gravity fails, its siblings fail too;
//  - pruning: in every time section, max(height, floor, lowest start of its unplaced buffers)
//    + sizes still to place there must fit the capacity;
//  - decomposition: once the unplaced buffers split into groups that share no time section,
//    each group is solved alone (re-ranked by its own crowding), so a failure in one never
//    re-explores the others;
//  - memoized failures: a state proven to have no solution is not searched again (keyed by
//    what its subtree reads: the unplaced buffers, their gravities, the floor and the ranks
//    that decide ties); a split-off part's answer does not depend on the order, so parts
//    proven infeasible are reused by every order and round (failure_memo.h);
//  - restarts: a portfolio of static preorders, with and without re-ranking, run round-robin
//    under a doubling node limit; with the memo, a restart carries on rather than starts over.
// Worst case exponential; runs under a deadline and reports a timeout. One memory space at a
// time; may_share_with hints are resolved before (sharing.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/problem.h"

namespace hexir::planner {

enum class SearchOutcome { kFound, kInfeasible, kTimeout, kNodeLimit };

struct SearchResult {
  SearchOutcome outcome = SearchOutcome::kInfeasible;
  std::vector<uint64_t> offsets;  // when found: per buffer of the problem
  uint64_t nodes = 0;             // search nodes visited
  uint64_t memo_hits = 0;         // states found in the failure memo (their subtrees skipped)
};

struct SearchOptions {
  // Total search nodes before giving up (0: only the deadline). A node budget, unlike a
  // deadline, gives the same answer on every run: the compiler uses it so that compiling
  // twice gives the same bytes.
  uint64_t max_nodes = 0;
  // Workers of a parallel portfolio (different orders on different threads; the first
  // definite answer wins). More than 1 makes the result depend on timing.
  int threads = 1;
  // Static preorders to run round-robin, as letters (exact_search.cc); empty: the default
  // portfolio. Each order alone is a complete search; tests run them one by one.
  std::vector<std::string> orders;
  // Remember failed states (failure_memo.h). Off only to test that it changes no answer.
  bool failure_memo = true;
};

// Packs all buffers of `problem` (one space; `space` fields ignored) under `capacity` bytes.
SearchResult SearchExact(const Problem& problem, uint64_t capacity,
                         std::chrono::steady_clock::time_point deadline, const SearchOptions& options = {});

}  // namespace hexir::planner

// The planner's front door: coalesce shared buffers, then per memory space take the best of
// best-fit over several orderings and, when that is above the lower bound (or over the
// capacity), an exact search under a time budget that tightens the arena toward the bound.
//
// Usage:
//   planner::SolveOptions options;
//   options.time_limit_seconds = 1.0;
//   StatusOr<planner::Solution> s = planner::Solve(problem, options);
//   s->plan.offsets[i], s->spaces[0].arena_bytes, s->spaces[0].lower_bound_bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hexir/status.h"
#include "planner/plan.h"
#include "planner/problem.h"

namespace hexir::planner {

struct SolveOptions {
  double time_limit_seconds = 1.0;  // for the exact search, over all spaces
  // Search nodes per exact-search call (0: the time limit alone). Deterministic, unlike the
  // time limit: with a budget that ends first, the same problem always gets the same plan.
  uint64_t max_search_nodes = 0;
  int search_threads = 1;  // > 1: parallel portfolio (fastest, but timing-dependent)
  std::vector<std::string> search_orders;  // empty: the default portfolio (SearchOptions)
  // Threads for the best-fit orderings of problems with 20,000 buffers or more (0: one per
  // core, at most one per ordering). The plan is the same with any number.
  int best_fit_threads = 0;
  bool exact_search = true;         // false: best-fit orderings only
  // With a capacity: stop at the first plan that fits it, rather than spending the rest of
  // the time limit tightening it toward the lower bound.
  bool stop_at_capacity = true;
};

struct SpaceReport {
  uint64_t arena_bytes = 0;
  uint64_t lower_bound_bytes = 0;  // max-load bound, after sharing
  uint64_t best_fit_bytes = 0;     // the best of the best-fit orderings
  std::string method;              // "best-fit(size)", "exact", ...
  bool optimal = false;            // arena == lower bound, or proven minimal by the search
  // Not optimal: whether the exact search stopped at its time or node limit with targets left
  // between the proven bound and the arena (a larger budget may find a smaller plan).
  bool search_cut_off = false;
  // Every arena below this is proven impossible (at least the max-load bound).
  uint64_t proven_lower_bound_bytes = 0;
  // How good the plan is, in words: "optimal", or how far above the lower bound and whether a
  // larger search budget could still find a smaller plan.
  std::string Quality() const;
  // 1 - lower_bound / arena: the share of the arena no plan could avoid wasting... or did.
  double fragmentation() const {
    return arena_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(lower_bound_bytes) / arena_bytes;
  }
};

struct Solution {
  Plan plan;
  std::vector<SpaceReport> spaces;
  double seconds = 0;
};

// RESOURCE_EXHAUSTED when a space cannot be fitted under its capacity within the time limit,
// with the capacity, the lower bound and the best size found.
StatusOr<Solution> Solve(const Problem& problem, const SolveOptions& options = {});

}  // namespace hexir::planner

#include "planner/solver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <optional>
#include <thread>

#include "planner/best_fit.h"
#include "planner/exact_search.h"
#include "planner/lower_bound.h"
#include "planner/sharing.h"

namespace hexir::planner {
namespace {

using Clock = std::chrono::steady_clock;

// The buffers of one space, as their own problem.
Problem ExtractSpace(const Problem& blocks, uint32_t space, std::vector<size_t>& ids) {
  Problem p;
  for (size_t i = 0; i < blocks.buffers.size(); ++i) {
    if (blocks.buffers[i].space != space) continue;
    ids.push_back(i);
    p.buffers.push_back(blocks.buffers[i]);
    p.buffers.back().space = 0;
  }
  return p;
}

// Best-fit under every ordering, results in kAllBestFitOrders' order. Large problems use
// several threads (each ordering is independent and deterministic, so the result does not
// depend on them); each worker builds its own index.
std::vector<std::optional<StatusOr<Plan>>> BestFitAllOrders(const Problem& sub, int threads) {
  constexpr size_t kParallelBuffers = 20000;  // below this, threads cost more than they save
  const size_t count = std::size(kAllBestFitOrders);
  std::vector<std::optional<StatusOr<Plan>>> plans(count);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int workers = sub.buffers.size() < kParallelBuffers ? 1 : std::min<int>(threads, static_cast<int>(count));
  auto work = [&](int w) {
    IntervalIndex index = BestFitIndex(sub);
    for (size_t k = static_cast<size_t>(w); k < count; k += static_cast<size_t>(workers))
      plans[k].emplace(SolveBestFit(sub, kAllBestFitOrders[k], index));
  };
  if (workers == 1) {
    work(0);
    return plans;
  }
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) pool.emplace_back(work, w);
  for (std::thread& t : pool) t.join();
  return plans;
}

}  // namespace

std::string SpaceReport::Quality() const {
  if (optimal) return "optimal";
  char text[256];
  double above = lower_bound_bytes == 0 ? 0.0 : 100.0 * (static_cast<double>(arena_bytes) / lower_bound_bytes - 1.0);
  std::snprintf(text, sizeof(text), "%.2f%% above the lower bound%s", above,
                search_cut_off ? "; the exact search stopped at its limit (a larger budget may find a smaller plan)"
                               : method == "exact" || method.empty() ? ""
                                                                     : "; found by best-fit only");
  return text;
}

StatusOr<Solution> Solve(const Problem& problem, const SolveOptions& options) {
  HEXIR_RETURN_IF_ERROR(ValidateProblem(problem));
  Clock::time_point start = Clock::now();
  Clock::time_point deadline =
      start + std::chrono::microseconds(static_cast<int64_t>(options.time_limit_seconds * 1e6));
  SearchOptions search;
  search.max_nodes = options.max_search_nodes;
  search.threads = options.search_threads;
  search.orders = options.search_orders;
  CoalescedProblem coalesced = Coalesce(problem);
  const Problem& blocks = coalesced.blocks;
  uint32_t spaces = problem.num_spaces();

  Plan block_plan;
  block_plan.offsets.assign(blocks.buffers.size(), 0);
  block_plan.space_sizes.assign(spaces, 0);
  Solution solution;
  solution.spaces.resize(spaces);
  for (uint32_t s = 0; s < spaces; ++s) {
    std::vector<size_t> ids;
    Problem sub = ExtractSpace(blocks, s, ids);
    SpaceReport& report = solution.spaces[s];
    std::vector<uint64_t> bounds = MaxLoadLowerBound(sub);
    uint64_t lb = bounds.empty() ? 0 : bounds[0];
    report.lower_bound_bytes = lb;
    // Best-fit over several orderings; keep the smallest.
    std::vector<uint64_t> best_offsets;
    uint64_t best = UINT64_MAX;
    std::vector<std::optional<StatusOr<Plan>>> plans = BestFitAllOrders(sub, options.best_fit_threads);
    for (size_t k = 0; k < plans.size(); ++k) {
      BestFitOrder order = kAllBestFitOrders[k];
      StatusOr<Plan>& plan = *plans[k];
      if (!plan.ok()) return plan.status();
      uint64_t size = plan->space_sizes.empty() ? 0 : plan->space_sizes[0];
      if (size < best) {
        best = size;
        best_offsets = plan->offsets;
        report.method = std::string("best-fit(") + BestFitOrderName(order) + ")";
      }
    }
    report.best_fit_bytes = best;
    uint64_t capacity = problem.capacity(s);
    // Exact search, anytime: every plan it finds tightens the target, the best plan so far is
    // always kept. First the capacity, when best-fit misses it; then the lower bound itself
    // (optimal if found), then a bisection between what is proven infeasible and the best size
    // found. A target the search can neither fill nor refute within its share of the budget
    // is not given up on: the next targets lie between it and the best size (easier), so a
    // hard bound no longer eats the whole budget while best-fit stands (MiniMalloc's D: from
    // best-fit's 1,315,840 to about 1,03x,xxx bytes). The search keeps pairwise overlap lists:
    // beyond a few thousand buffers, best-fit only.
    constexpr size_t kMaxExactBuffers = 4000;
    if (options.exact_search && best > lb && !sub.buffers.empty() && sub.buffers.size() <= kMaxExactBuffers) {
      uint64_t low = lb;      // every size below `low` is proven infeasible
      uint64_t floor = lb;    // targets below `floor` were tried without an answer
      uint64_t high = best;   // feasible: the best plan found
      uint64_t nodes_left = options.max_search_nodes;
      auto attempt = [&](uint64_t target, int share) {
        // Each attempt gets 1/share of what is left of the time and of the node budget, so the
        // answer still depends only on the node budget when that is what ends the search.
        SearchOptions limited = search;
        if (nodes_left > 0) {
          limited.max_nodes = std::max<uint64_t>(nodes_left / share, 1);
        }
        Clock::time_point now = Clock::now();
        Clock::time_point slice = now + (deadline - now) / share;
        SearchResult r = SearchExact(sub, target, nodes_left > 0 ? deadline : slice, limited);
        if (nodes_left > 0) nodes_left -= std::min(nodes_left, r.nodes);
        if (r.outcome == SearchOutcome::kFound) {
          uint64_t size = 0;
          for (size_t i = 0; i < sub.buffers.size(); ++i) size = std::max(size, r.offsets[i] + sub.buffers[i].size);
          high = size;
          best = size;
          best_offsets = r.offsets;
          report.method = "exact";
        } else if (r.outcome == SearchOutcome::kInfeasible) {
          low = std::max(low, target + 1);
          floor = std::max(floor, low);
        } else {
          floor = std::max(floor, target + 1);
          report.search_cut_off = true;
        }
        return r.outcome;
      };
      auto budget_left = [&] {
        return Clock::now() < deadline && (options.max_search_nodes == 0 || nodes_left > 0);
      };
      if (capacity != 0 && capacity < high) attempt(capacity, 2);
      bool fits_capacity = capacity != 0 && best <= capacity;
      if (!(fits_capacity && options.stop_at_capacity) && low < high && budget_left()) attempt(lb, 8);
      while (low < high && floor < high && budget_left() && !(fits_capacity && options.stop_at_capacity)) {
        uint64_t target = floor + (high - floor) / 2;
        attempt(target, 4);
        fits_capacity = capacity != 0 && best <= capacity;
      }
      report.optimal = low >= high;
      report.search_cut_off = !report.optimal;  // targets left between the proven bound and the plan
      report.proven_lower_bound_bytes = std::min(low, best);
    }
    report.optimal = report.optimal || best == lb;
    if (report.optimal) report.search_cut_off = false;
    if (report.proven_lower_bound_bytes < lb) report.proven_lower_bound_bytes = lb;
    report.arena_bytes = best;
    if (capacity != 0 && best > capacity)
      return ResourceExhaustedError("memory space ", s, " does not fit its capacity of ", capacity,
                                    " bytes: the lower bound is ", lb, " bytes and the best plan found ",
                                    "needs ", best, " bytes (", report.method, ")");
    for (size_t k = 0; k < ids.size(); ++k) block_plan.offsets[ids[k]] = best_offsets[k];
    block_plan.space_sizes[s] = best;
  }
  solution.plan = Expand(coalesced, block_plan);
  solution.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return solution;
}

}  // namespace hexir::planner

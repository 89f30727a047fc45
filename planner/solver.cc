#include "planner/solver.h"

#include <algorithm>
#include <chrono>
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
    // Exact search: first at the lower bound (optimal if found), then, if the capacity or
    // the best-fit result leave room, bisect between the bound and the best size found.
    // The search keeps pairwise overlap lists: beyond a few thousand buffers, best-fit only.
    constexpr size_t kMaxExactBuffers = 4000;
    if (options.exact_search && best > lb && !sub.buffers.empty() && sub.buffers.size() <= kMaxExactBuffers) {
      uint64_t low = lb, high = best;  // infeasible below `low` is unknown; `high` is feasible
      if (capacity != 0 && capacity < high) {
        SearchResult r = SearchExact(sub, capacity, deadline, search);
        if (r.outcome == SearchOutcome::kFound) {
          high = 0;
          for (size_t i = 0; i < sub.buffers.size(); ++i)
            high = std::max(high, r.offsets[i] + sub.buffers[i].size);
          best = high;
          best_offsets = r.offsets;
          report.method = "exact";
        }
      }
      bool fits_capacity = capacity != 0 && best <= capacity;
      while (low < high && Clock::now() < deadline && !(fits_capacity && options.stop_at_capacity)) {
        uint64_t target = low + (high - low) / 2;
        if (low == lb && target != lb) target = lb;  // try the bound itself first
        SearchResult r = SearchExact(sub, target, deadline, search);
        if (r.outcome == SearchOutcome::kFound) {
          uint64_t size = 0;
          for (size_t i = 0; i < sub.buffers.size(); ++i)
            size = std::max(size, r.offsets[i] + sub.buffers[i].size);
          high = size;
          best = size;
          best_offsets = r.offsets;
          report.method = "exact";
        } else if (r.outcome == SearchOutcome::kInfeasible) {
          low = target + 1;
        } else {
          break;  // out of time
        }
      }
      report.optimal = low >= high;
    }
    report.optimal = report.optimal || best == lb;
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

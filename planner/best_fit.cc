#include "planner/best_fit.h"

#include <algorithm>
#include <numeric>

#include "base/alignment.h"

namespace hexir::planner {

const char* BestFitOrderName(BestFitOrder order) {
  switch (order) {
    case BestFitOrder::kSizeDecreasing: return "size";
    case BestFitOrder::kLifetimeDecreasing: return "lifetime";
    case BestFitOrder::kAreaDecreasing: return "area";
    case BestFitOrder::kBirthOrder: return "birth";
  }
  return "?";
}

Status ValidateProblem(const Problem& problem) {
  const std::vector<BufferRequest>& bufs = problem.buffers;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!IsPowerOfTwo(bufs[i].alignment))
      return InvalidArgumentError("buffer ", i, " ('", bufs[i].name, "') has alignment ",
                                  bufs[i].alignment, ", which is not a power of two");
    if (bufs[i].last < bufs[i].first)
      return InvalidArgumentError("buffer ", i, " ('", bufs[i].name, "') dies at step ",
                                  bufs[i].last, " before it is born at step ", bufs[i].first);
  }
  return Status::Ok();
}

IntervalIndex BestFitIndex(const Problem& problem) {
  std::vector<std::pair<int64_t, int64_t>> intervals(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    intervals[i] = {problem.buffers[i].first, problem.buffers[i].last};
  return IntervalIndex(intervals);
}

StatusOr<Plan> SolveBestFit(const Problem& problem, BestFitOrder order) {
  IntervalIndex index = BestFitIndex(problem);
  return SolveBestFit(problem, order, index);
}

StatusOr<Plan> SolveBestFit(const Problem& problem, BestFitOrder order, IntervalIndex& index) {
  HEXIR_RETURN_IF_ERROR(ValidateProblem(problem));
  index.Reset();
  const std::vector<BufferRequest>& bufs = problem.buffers;
  auto lifetime = [&](size_t i) { return static_cast<uint64_t>(bufs[i].last - bufs[i].first + 1); };
  std::vector<size_t> ordered(bufs.size());
  std::iota(ordered.begin(), ordered.end(), 0);
  std::stable_sort(ordered.begin(), ordered.end(), [&](size_t a, size_t b) {
    switch (order) {
      case BestFitOrder::kSizeDecreasing:
        if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
        break;
      case BestFitOrder::kLifetimeDecreasing:
        if (lifetime(a) != lifetime(b)) return lifetime(a) > lifetime(b);
        if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
        break;
      case BestFitOrder::kAreaDecreasing: {
        // Sizes below 2^40 and lifetimes below 2^23 keep the product exact in 64 bits; beyond
        // that, long double keeps the order sensible.
        long double area_a = static_cast<long double>(bufs[a].size) * lifetime(a);
        long double area_b = static_cast<long double>(bufs[b].size) * lifetime(b);
        if (area_a != area_b) return area_a > area_b;
        break;
      }
      case BestFitOrder::kBirthOrder:
        break;
    }
    return bufs[a].first < bufs[b].first;
  });

  Plan plan;
  plan.offsets.assign(bufs.size(), 0);
  plan.space_sizes.assign(problem.num_spaces(), 0);
  std::vector<size_t> conflicts;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of conflicting buffers
  // Placed ranges and spaces in compact arrays: the conflict scan is the hot loop, and a
  // BufferRequest (with its name) is several cache lines away from the next.
  std::vector<std::pair<uint64_t, uint64_t>> placed(bufs.size());
  std::vector<uint32_t> space(bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) space[i] = bufs[i].space;
  for (size_t i : ordered) {
    const BufferRequest& b = bufs[i];
    if (b.size == 0) continue;
    conflicts.clear();
    index.QueryActive(b.first, b.last, conflicts);
    busy.clear();
    for (size_t j : conflicts)
      if (space[j] == b.space) busy.push_back(placed[j]);
    std::sort(busy.begin(), busy.end());
    uint64_t best = UINT64_MAX, best_waste = UINT64_MAX, cursor = 0;
    for (const auto& [start, end] : busy) {
      uint64_t candidate = AlignUp(cursor, b.alignment);
      if (candidate + b.size <= start && start - candidate - b.size < best_waste) {
        best = candidate;
        best_waste = start - candidate - b.size;
      }
      cursor = std::max(cursor, end);
    }
    if (best == UINT64_MAX) best = AlignUp(cursor, b.alignment);
    plan.offsets[i] = best;
    placed[i] = {best, best + b.size};
    plan.space_sizes[b.space] = std::max(plan.space_sizes[b.space], best + b.size);
    index.Activate(i);
  }
  for (uint32_t s = 0; s < plan.space_sizes.size(); ++s) {
    uint64_t cap = problem.capacity(s);
    if (cap != 0 && plan.space_sizes[s] > cap)
      return ResourceExhaustedError("memory space ", s, " needs ", plan.space_sizes[s],
                                    " bytes with best-fit, over its capacity of ", cap, " bytes");
  }
  return plan;
}

}  // namespace hexir::planner

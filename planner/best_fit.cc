#include "planner/best_fit.h"

#include <algorithm>
#include <numeric>

#include "base/alignment.h"

namespace hexir::planner {

StatusOr<Plan> SolveBestFit(const Problem& problem) {
  const std::vector<BufferRequest>& bufs = problem.buffers;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!IsPowerOfTwo(bufs[i].alignment))
      return InvalidArgumentError("buffer ", i, " ('", bufs[i].name, "') has alignment ",
                                  bufs[i].alignment, ", which is not a power of two");
    if (bufs[i].last < bufs[i].first)
      return InvalidArgumentError("buffer ", i, " ('", bufs[i].name, "') dies at step ",
                                  bufs[i].last, " before it is born at step ", bufs[i].first);
  }
  std::vector<size_t> order(bufs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
    return bufs[a].first < bufs[b].first;
  });

  Plan plan;
  plan.offsets.assign(bufs.size(), 0);
  plan.space_sizes.assign(problem.num_spaces(), 0);
  std::vector<size_t> placed;
  placed.reserve(bufs.size());
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of conflicting buffers
  for (size_t i : order) {
    const BufferRequest& b = bufs[i];
    if (b.size == 0) continue;
    busy.clear();
    for (size_t j : placed) {
      if (bufs[j].space == b.space && LifetimesOverlap(bufs[j], b))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + bufs[j].size);
    }
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
    plan.space_sizes[b.space] = std::max(plan.space_sizes[b.space], best + b.size);
    placed.push_back(i);
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

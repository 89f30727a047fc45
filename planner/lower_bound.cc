#include "planner/lower_bound.h"

#include <algorithm>
#include <tuple>

namespace hexir::planner {

std::vector<uint64_t> MaxLoadLowerBound(const Problem& problem) {
  uint32_t spaces = problem.num_spaces();
  std::vector<uint64_t> bound(spaces, 0);
  // Events (space, step, kind, size): a buffer adds its size at `first` and removes it after
  // `last`; removals at step t+1 sort before additions at t+1 (kind 0 < 1).
  std::vector<std::tuple<uint32_t, int64_t, int, uint64_t>> events;
  events.reserve(problem.buffers.size() * 2);
  for (const BufferRequest& b : problem.buffers) {
    if (b.size == 0) continue;
    events.emplace_back(b.space, b.first, 1, b.size);
    events.emplace_back(b.space, b.last + 1, 0, b.size);
  }
  std::sort(events.begin(), events.end());
  std::vector<uint64_t> load(spaces, 0);
  for (const auto& [space, step, kind, size] : events) {
    if (kind == 1) {
      load[space] += size;
      bound[space] = std::max(bound[space], load[space]);
    } else {
      load[space] -= size;
    }
  }
  return bound;
}

}  // namespace hexir::planner

#include "planner/verifier.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "base/alignment.h"

namespace hexir::planner {

Status Verify(const Problem& problem, const Plan& plan) {
  const auto& bufs = problem.buffers;
  if (plan.offsets.size() != bufs.size())
    return InternalError("plan has ", plan.offsets.size(), " offsets for ", bufs.size(), " buffers");
  for (size_t i = 0; i < bufs.size(); ++i) {
    const BufferRequest& b = bufs[i];
    if (b.size == 0) continue;
    uint64_t off = plan.offsets[i];
    if (!IsAligned(off, b.alignment))
      return InternalError("buffer ", i, " ('", b.name, "') at offset ", off,
                           " is not aligned to ", b.alignment);
    uint64_t arena = b.space < plan.space_sizes.size() ? plan.space_sizes[b.space] : 0;
    if (!RangeWithin(off, b.size, arena))
      return InternalError("buffer ", i, " ('", b.name, "') [", off, ", ", off + b.size,
                           ") lies outside its space's arena of ", arena, " bytes");
    uint64_t cap = problem.capacity(b.space);
    if (cap != 0 && off + b.size > cap)
      return InternalError("buffer ", i, " ('", b.name, "') ends at ", off + b.size,
                           ", over the capacity ", cap);
  }
  // Sweep over time: at each birth, the newcomer must not overlap any live buffer of its space.
  // Live buffers are kept ordered by offset, so only the neighbours need checking.
  std::vector<size_t> order(bufs.size());
  std::iota(order.begin(), order.end(), 0);
  // At one step, a buffer that takes over another's memory comes after the others: its donor
  // may be born at that very step (a value recomputed just before the dispatch that overwrites
  // it) and must be in the live set to be handed over.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool takes_a = plan.shared(a) >= 0, takes_b = plan.shared(b) >= 0;
    return std::tie(bufs[a].first, takes_a, a) < std::tie(bufs[b].first, takes_b, b);
  });
  // Active set per space, ordered by (offset, index). Expiry by a min-heap on `last`.
  std::vector<std::set<std::pair<uint64_t, size_t>>> live(problem.num_spaces());
  std::vector<size_t> by_death(order);
  std::sort(by_death.begin(), by_death.end(), [&](size_t a, size_t b) {
    return std::tie(bufs[a].last, a) < std::tie(bufs[b].last, b);
  });
  size_t next_death = 0;
  for (size_t i : order) {
    const BufferRequest& b = bufs[i];
    while (next_death < by_death.size() && bufs[by_death[next_death]].last < b.first) {
      size_t d = by_death[next_death++];
      live[bufs[d].space].erase({plan.offsets[d], d});
    }
    if (b.size == 0) continue;
    auto& set = live[b.space];
    uint64_t off = plan.offsets[i];
    // An honoured sharing hint: this buffer takes over the memory of one that dies as it is
    // born. Legal only as an exact handoff; the old buffer then leaves the live set.
    if (int64_t t = plan.shared(i); t >= 0) {
      const BufferRequest& x = bufs[static_cast<size_t>(t)];
      if (x.last != b.first || x.size != b.size || x.space != b.space || plan.offsets[t] != off)
        return InternalError("buffer ", i, " ('", b.name, "') shares the memory of buffer ", t, " ('",
                             x.name, "') but is not an exact handoff (", x.name, " lives ", x.first, "..",
                             x.last, " at ", plan.offsets[t], " size ", x.size, "; ", b.name, " lives ",
                             b.first, "..", b.last, " at ", off, " size ", b.size, ")");
      set.erase({off, static_cast<size_t>(t)});
    }
    auto it = set.lower_bound({off, 0});
    auto clash = [&](size_t j) {
      return InternalError("buffers ", i, " ('", b.name, "', [", off, ", ", off + b.size,
                           ") live ", b.first, "..", b.last, ") and ", j, " ('", bufs[j].name,
                           "', [", plan.offsets[j], ", ", plan.offsets[j] + bufs[j].size,
                           ") live ", bufs[j].first, "..", bufs[j].last,
                           ") overlap in memory while both are live");
    };
    if (it != set.end() && it->first < off + b.size) return clash(it->second);
    if (it != set.begin()) {
      auto prev = std::prev(it);
      if (plan.offsets[prev->second] + bufs[prev->second].size > off) return clash(prev->second);
    }
    set.insert({off, i});
  }
  return Status::Ok();
}

}  // namespace hexir::planner

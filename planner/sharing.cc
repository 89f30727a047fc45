#include "planner/sharing.h"

#include <algorithm>
#include <numeric>

namespace hexir::planner {

CoalescedProblem Coalesce(const Problem& problem) {
  const auto& bufs = problem.buffers;
  size_t n = bufs.size();
  CoalescedProblem out;
  out.shared_with.assign(n, -1);
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<char> taken(n, 0);
  for (size_t y = 0; y < n; ++y) {
    int64_t hint = bufs[y].may_share_with;
    if (hint < 0 || static_cast<size_t>(hint) >= n || static_cast<size_t>(hint) == y) continue;
    size_t x = static_cast<size_t>(hint);
    if (taken[x] || bufs[x].last != bufs[y].first || bufs[x].size != bufs[y].size ||
        bufs[x].space != bufs[y].space || bufs[x].size == 0)
      continue;
    taken[x] = 1;
    out.shared_with[y] = hint;
    parent[find(y)] = find(x);
  }
  out.block_of.assign(n, 0);
  std::vector<int64_t> block_index(n, -1);
  out.blocks.capacities = problem.capacities;
  for (size_t i = 0; i < n; ++i) {
    size_t root = find(i);
    if (block_index[root] < 0) {
      block_index[root] = static_cast<int64_t>(out.blocks.buffers.size());
      BufferRequest b = bufs[i];
      b.may_share_with = -1;
      out.blocks.buffers.push_back(b);
    }
    BufferRequest& b = out.blocks.buffers[block_index[root]];
    b.first = std::min(b.first, bufs[i].first);
    b.last = std::max(b.last, bufs[i].last);
    b.alignment = std::max(b.alignment, bufs[i].alignment);
    b.size = std::max(b.size, bufs[i].size);
    out.block_of[i] = static_cast<size_t>(block_index[root]);
  }
  return out;
}

Plan Expand(const CoalescedProblem& coalesced, const Plan& block_plan) {
  Plan plan;
  plan.space_sizes = block_plan.space_sizes;
  plan.offsets.resize(coalesced.block_of.size());
  for (size_t i = 0; i < coalesced.block_of.size(); ++i)
    plan.offsets[i] = block_plan.offsets[coalesced.block_of[i]];
  plan.shared_with = coalesced.shared_with;
  return plan;
}

}  // namespace hexir::planner

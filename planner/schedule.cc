#include "planner/schedule.h"

#include <algorithm>

namespace hexir::planner {

uint64_t PeakMemory(const ScheduleGraph& graph, const std::vector<size_t>& order) {
  std::vector<size_t> step(graph.num_nodes);
  for (size_t t = 0; t < order.size(); ++t) step[order[t]] = t;
  std::vector<int64_t> delta(order.size() + 1, 0);
  for (const auto& v : graph.values) {
    if (!v.counted || v.producer < 0 || v.size == 0) continue;
    size_t first = step[v.producer], last = first;
    for (size_t c : v.consumers) last = std::max(last, step[c]);
    delta[first] += static_cast<int64_t>(v.size);
    delta[last + 1] -= static_cast<int64_t>(v.size);
  }
  int64_t live = 0, peak = 0;
  for (size_t t = 0; t < order.size(); ++t) {
    live += delta[t];
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

std::vector<size_t> ScheduleForMemory(const ScheduleGraph& graph) {
  size_t n = graph.num_nodes;
  std::vector<std::vector<size_t>> outputs(n), inputs(n);
  std::vector<size_t> waiting(n, 0);  // unscheduled producers a node depends on
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const auto& value = graph.values[v];
    if (value.producer >= 0) outputs[value.producer].push_back(v);
    for (size_t c : value.consumers) inputs[c].push_back(v);
  }
  std::vector<std::vector<size_t>> successors(n);
  for (size_t node = 0; node < n; ++node) {
    std::vector<size_t> producers;
    for (size_t v : inputs[node])
      if (graph.values[v].producer >= 0) producers.push_back(static_cast<size_t>(graph.values[v].producer));
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    waiting[node] = producers.size();
    for (size_t p : producers) successors[p].push_back(node);
  }
  // Readers still to run per value, to know which node frees it.
  std::vector<size_t> readers_left(graph.values.size());
  for (size_t v = 0; v < graph.values.size(); ++v) {
    std::vector<size_t> c = graph.values[v].consumers;
    std::sort(c.begin(), c.end());
    readers_left[v] = std::unique(c.begin(), c.end()) - c.begin();
  }
  std::vector<char> ready(n, 0), done(n, 0);
  for (size_t node = 0; node < n; ++node) ready[node] = waiting[node] == 0;
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t step = 0; step < n; ++step) {
    int64_t best_delta = INT64_MAX;
    size_t best = n;
    for (size_t node = 0; node < n; ++node) {
      if (!ready[node] || done[node]) continue;
      int64_t delta = 0;
      for (size_t v : outputs[node])
        if (graph.values[v].counted) delta += static_cast<int64_t>(graph.values[v].size);
      std::vector<size_t> seen;
      for (size_t v : inputs[node]) {
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        const auto& value = graph.values[v];
        if (value.counted && value.producer >= 0 && readers_left[v] == 1)
          delta -= static_cast<int64_t>(value.size);
      }
      if (delta < best_delta) {
        best_delta = delta;
        best = node;
      }
    }
    if (best == n) break;  // a cycle: cannot happen for SSA graphs; keep what we have
    done[best] = 1;
    order.push_back(best);
    std::vector<size_t> seen;
    for (size_t v : inputs[best]) {
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      --readers_left[v];
    }
    for (size_t s : successors[best])
      if (--waiting[s] == 0) ready[s] = 1;
  }
  if (order.size() != n) {  // defensive: fall back to program order
    order.resize(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
  }
  return order;
}

}  // namespace hexir::planner

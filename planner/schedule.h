// Memory-aware scheduling: choose an order of the dispatches (any topological order of their
// data dependences) that lowers the peak of live memory, before the planner packs it.
//
// Greedy list scheduling (as in TVM's and XLA's memory schedulers, simplified): among ready
// nodes, run the one that grows live memory least (bytes it allocates minus bytes whose last
// reader it is), ties in program order. O(n^2) for n nodes. Known weak spot: greedy; a
// branchy graph can need look-ahead. The caller keeps the original order unless the new
// one's peak is lower.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hexir::planner {

struct ScheduleGraph {
  struct Value {
    uint64_t size = 0;
    int64_t producer = -1;          // node index; -1: exists before any node (not counted)
    std::vector<size_t> consumers;  // node indices reading it
    bool counted = true;            // false: not arena memory (a graph output, say)
  };
  size_t num_nodes = 0;
  std::vector<Value> values;
};

// Peak bytes of counted values live at once under `order`: a value is live from its producer
// through its last consumer (or just its producer's step when unread).
uint64_t PeakMemory(const ScheduleGraph& graph, const std::vector<size_t>& order);

// A topological order with a greedy low peak. The identity order when the graph is empty.
std::vector<size_t> ScheduleForMemory(const ScheduleGraph& graph);

}  // namespace hexir::planner

// IntervalIndex: which of a fixed set of closed intervals [first, last] overlap a query
// interval, among those marked active. Used by best-fit to find the already-placed buffers
// that conflict with the next one without scanning them all.
//
// Structure: a segment tree over the compressed time axis; each interval is stored in the
// O(log T) canonical nodes covering it (stabbing queries), plus the intervals sorted by start
// (starts inside the query). Build O(n log n); query O(log n + k) for k reported candidates.
// Thread safety: thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hexir::planner {

class IntervalIndex {
 public:
  // intervals[i] = {first, last}, inclusive.
  explicit IntervalIndex(const std::vector<std::pair<int64_t, int64_t>>& intervals);

  void Activate(size_t i) { active_[i] = 1; }
  // Appends the active intervals overlapping [first, last] to `out` (each once).
  void QueryActive(int64_t first, int64_t last, std::vector<size_t>& out) const;

 private:
  void Insert(size_t node, size_t lo, size_t hi, size_t a, size_t b, size_t id);

  std::vector<std::pair<int64_t, int64_t>> intervals_;
  std::vector<int64_t> times_;                 // sorted distinct starts
  std::vector<std::vector<size_t>> tree_;      // canonical cover lists per node
  std::vector<size_t> by_start_;               // interval ids sorted by start
  std::vector<int64_t> starts_sorted_;
  std::vector<char> active_;
};

}  // namespace hexir::planner

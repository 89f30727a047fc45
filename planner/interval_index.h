// IntervalIndex: which of a fixed set of closed intervals [first, last] overlap a query
// interval, among those marked active. Used by best-fit to find the already-placed buffers
// that conflict with the next one without scanning them all.
//
// Two segment trees over the distinct start times, filled as intervals are activated (so a
// query never walks past an inactive interval):
//  - cover: an interval is stored in the O(log T) canonical nodes covering the start points
//    it contains; the intervals containing `first` are found on the path to the largest
//    start point <= first (stabbing), each checked against `first` from its stored end;
//  - starts: an interval is stored in every node above the leaf of its own start; the
//    intervals starting in (first, last] are the lists of the O(log T) canonical nodes of
//    that range, all overlapping by construction.
// Build O(n log n); Activate O(log T); query O(log T + k) for k reported intervals plus the
// active ones on the stabbing path that end before `first`. Thread safety: thread-compatible.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace hexir::planner {

class IntervalIndex {
 public:
  // intervals[i] = {first, last}, inclusive.
  explicit IntervalIndex(const std::vector<std::pair<int64_t, int64_t>>& intervals);

  void Activate(size_t i);
  // Deactivates every interval, keeping the structure (to reuse it for another order).
  void Reset();
  // Appends the active intervals overlapping [first, last] to `out` (each once).
  void QueryActive(int64_t first, int64_t last, std::vector<size_t>& out) const;

 private:
  struct Entry {
    int64_t last;  // the interval's end, beside its id: no lookup while scanning
    size_t id;
  };
  // Per-node lists in one flat array: node n owns [base[n], base[n] + capacity), filled up
  // to size[n].
  template <typename T>
  struct Lists {
    Lists() = default;
    explicit Lists(const std::vector<size_t>& capacity) : base(capacity.size() + 1, 0), size(capacity.size(), 0) {
      for (size_t n = 0; n < capacity.size(); ++n) base[n + 1] = base[n] + capacity[n];
      items.resize(base.back());
    }
    void Push(size_t node, const T& v) { items[base[node] + size[node]++] = v; }
    void Clear() { std::fill(size.begin(), size.end(), 0); }
    size_t Size(size_t node) const { return size[node]; }
    const T* Begin(size_t node) const { return items.data() + base[node]; }
    const T* End(size_t node) const { return Begin(node) + size[node]; }
    std::vector<size_t> base, size;
    std::vector<T> items;
  };

  // Calls f on the canonical nodes covering start points [a, b).
  template <typename F>
  void VisitCover(size_t node, size_t lo, size_t hi, size_t a, size_t b, const F& f) const {
    if (b <= lo || hi <= a) return;
    if (a <= lo && hi <= b) {
      f(node);
      return;
    }
    size_t mid = (lo + hi) / 2;
    VisitCover(2 * node, lo, mid, a, b, f);
    VisitCover(2 * node + 1, mid, hi, a, b, f);
  }
  // Calls f on every node from the root down to the leaf of start point p.
  template <typename F>
  void VisitStart(size_t p, const F& f) const {
    size_t node = 1, lo = 0, hi = times_.size();
    while (true) {
      f(node);
      if (hi - lo == 1) break;
      size_t mid = (lo + hi) / 2;
      if (p < mid) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid;
      }
    }
  }
  void CollectStarts(size_t node, size_t lo, size_t hi, size_t a, size_t b, std::vector<size_t>& out) const;

  std::vector<std::pair<int64_t, int64_t>> intervals_;
  std::vector<int64_t> times_;                   // sorted distinct starts
  std::vector<std::pair<size_t, size_t>> span_;  // per interval: start points [a, b) it covers
  Lists<Entry> cover_;                           // canonical cover lists
  Lists<size_t> starts_;                         // ids starting below each node
};

}  // namespace hexir::planner

#include "planner/interval_index.h"

#include <algorithm>
#include <numeric>

namespace hexir::planner {

IntervalIndex::IntervalIndex(const std::vector<std::pair<int64_t, int64_t>>& intervals)
    : intervals_(intervals), active_(intervals.size(), 0) {
  for (const auto& iv : intervals_) times_.push_back(iv.first);
  std::sort(times_.begin(), times_.end());
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
  tree_.resize(4 * std::max<size_t>(times_.size(), 1));
  // An interval covers the start points in [first, last]; queries stab at the query's start.
  for (size_t id = 0; id < intervals_.size(); ++id) {
    size_t a = std::lower_bound(times_.begin(), times_.end(), intervals_[id].first) - times_.begin();
    size_t b = std::upper_bound(times_.begin(), times_.end(), intervals_[id].second) - times_.begin();
    if (a < b) Insert(1, 0, times_.size(), a, b, id);
  }
  by_start_.resize(intervals_.size());
  std::iota(by_start_.begin(), by_start_.end(), 0);
  std::stable_sort(by_start_.begin(), by_start_.end(),
                   [&](size_t x, size_t y) { return intervals_[x].first < intervals_[y].first; });
  for (size_t id : by_start_) starts_sorted_.push_back(intervals_[id].first);
}

void IntervalIndex::Insert(size_t node, size_t lo, size_t hi, size_t a, size_t b, size_t id) {
  if (b <= lo || hi <= a) return;
  if (a <= lo && hi <= b) {
    tree_[node].push_back(id);
    return;
  }
  size_t mid = (lo + hi) / 2;
  Insert(2 * node, lo, mid, a, b, id);
  Insert(2 * node + 1, mid, hi, a, b, id);
}

void IntervalIndex::QueryActive(int64_t first, int64_t last, std::vector<size_t>& out) const {
  // (1) Intervals that start at or before `first` and reach it: stab the start point at or
  // before `first`. Any interval containing `first` contains the largest start <= first? No:
  // it contains `first`, and its own start s <= first; it covers every start point in
  // [s, last_i], including the largest start point p <= first (p >= s since s is a start).
  auto it = std::upper_bound(times_.begin(), times_.end(), first);
  if (it != times_.begin()) {
    size_t p = (it - times_.begin()) - 1;
    size_t node = 1, lo = 0, hi = times_.size();
    while (true) {
      for (size_t id : tree_[node])
        if (active_[id] && intervals_[id].second >= first) out.push_back(id);
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
  // (2) Intervals starting inside (first, last].
  auto from = std::upper_bound(starts_sorted_.begin(), starts_sorted_.end(), first);
  auto to = std::upper_bound(starts_sorted_.begin(), starts_sorted_.end(), last);
  for (auto i = from; i < to; ++i) {
    size_t id = by_start_[i - starts_sorted_.begin()];
    if (active_[id]) out.push_back(id);
  }
}

}  // namespace hexir::planner

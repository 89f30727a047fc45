#include "planner/interval_index.h"

#include <algorithm>

namespace hexir::planner {

IntervalIndex::IntervalIndex(const std::vector<std::pair<int64_t, int64_t>>& intervals)
    : intervals_(intervals) {
  for (const auto& iv : intervals_) times_.push_back(iv.first);
  std::sort(times_.begin(), times_.end());
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
  size_t nodes = 4 * std::max<size_t>(times_.size(), 1);
  // An interval covers the start points in [first, last]: index range [a, b), a is its own.
  span_.resize(intervals_.size());
  for (size_t id = 0; id < intervals_.size(); ++id) {
    size_t a = std::lower_bound(times_.begin(), times_.end(), intervals_[id].first) - times_.begin();
    size_t b = std::upper_bound(times_.begin(), times_.end(), intervals_[id].second) - times_.begin();
    span_[id] = {a, b};
  }
  // Each node's list lives in one flat array, sized for every interval that could land there
  // (counted by a dry run of activating them all): no allocation while activating, and a
  // query reads contiguous memory.
  std::vector<size_t> cover_count(nodes, 0), start_count(nodes, 0);
  for (size_t id = 0; id < intervals_.size(); ++id) {
    auto [a, b] = span_[id];
    if (a >= b) continue;
    VisitCover(1, 0, times_.size(), a, b, [&](size_t node) { ++cover_count[node]; });
    VisitStart(a, [&](size_t node) { ++start_count[node]; });
  }
  cover_ = Lists<Entry>(cover_count);
  starts_ = Lists<size_t>(start_count);
}

void IntervalIndex::Activate(size_t i) {
  auto [a, b] = span_[i];
  if (a >= b) return;  // an interval ending before it starts overlaps nothing
  Entry e{intervals_[i].second, i};
  VisitCover(1, 0, times_.size(), a, b, [&](size_t node) { cover_.Push(node, e); });
  VisitStart(a, [&](size_t node) { starts_.Push(node, i); });
}

void IntervalIndex::Reset() {
  cover_.Clear();
  starts_.Clear();
}

void IntervalIndex::CollectStarts(size_t node, size_t lo, size_t hi, size_t a, size_t b,
                                  std::vector<size_t>& out) const {
  if (b <= lo || hi <= a || starts_.Size(node) == 0) return;
  if (a <= lo && hi <= b) {
    out.insert(out.end(), starts_.Begin(node), starts_.End(node));
    return;
  }
  size_t mid = (lo + hi) / 2;
  CollectStarts(2 * node, lo, mid, a, b, out);
  CollectStarts(2 * node + 1, mid, hi, a, b, out);
}

void IntervalIndex::QueryActive(int64_t first, int64_t last, std::vector<size_t>& out) const {
  // (1) Intervals that start at or before `first` and reach it. Such an interval contains
  // `first` and its own start s <= first, so it covers every start point in [s, its end],
  // including the largest start point p <= first: stab p.
  auto it = std::upper_bound(times_.begin(), times_.end(), first);
  size_t p_end = it - times_.begin();  // start points <= first are [0, p_end)
  if (p_end > 0) {
    VisitStart(p_end - 1, [&](size_t node) {
      for (const Entry* e = cover_.Begin(node); e != cover_.End(node); ++e)
        if (e->last >= first) out.push_back(e->id);
    });
  }
  // (2) Intervals starting inside (first, last]: start points [p_end, q_end).
  size_t q_end = std::upper_bound(times_.begin(), times_.end(), last) - times_.begin();
  if (p_end < q_end) CollectStarts(1, 0, times_.size(), p_end, q_end, out);
}

}  // namespace hexir::planner

#include "planner/exact_search.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <random>
#include <string>

#include "base/alignment.h"
#include "planner/failure_memo.h"

namespace hexir::planner {
namespace {

class Search {
 public:
  // `order`: the static preorder as letters, most significant first (see kOrders).
  Search(const Problem& problem, uint64_t capacity, std::chrono::steady_clock::time_point deadline,
         const std::string& order, uint64_t seed, uint64_t node_limit, FailureMemo* memo,
         const std::atomic<bool>* cancel = nullptr)
      : capacity_(capacity), deadline_(deadline), memo_(memo), node_limit_(node_limit), cancel_(cancel) {
    // Only buffers with memory take part; zero-size buffers sit at offset 0.
    for (size_t i = 0; i < problem.buffers.size(); ++i)
      if (problem.buffers[i].size > 0) ids_.push_back(i);
    n_ = ids_.size();
    std::vector<int64_t> points;
    for (size_t k : ids_) {
      points.push_back(problem.buffers[k].first);
      points.push_back(problem.buffers[k].last + 1);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    sections_ = points.empty() ? 0 : points.size() - 1;
    buf_.resize(n_);
    for (size_t i = 0; i < n_; ++i) {
      const BufferRequest& r = problem.buffers[ids_[i]];
      Buf& b = buf_[i];
      b.size = r.size;
      b.align = r.alignment;
      b.s0 = std::lower_bound(points.begin(), points.end(), r.first) - points.begin();
      b.s1 = std::lower_bound(points.begin(), points.end(), r.last + 1) - points.begin();
      b.length = static_cast<uint64_t>(r.last - r.first + 1);
    }
    // Overlap lists and the first identical buffer (same sections, size, alignment).
    overlaps_.resize(n_);
    twin_.assign(n_, -1);
    for (size_t i = 0; i < n_; ++i)
      for (size_t j = i + 1; j < n_; ++j) {
        if (buf_[i].s0 < buf_[j].s1 && buf_[j].s0 < buf_[i].s1) {
          overlaps_[i].push_back(j);
          overlaps_[j].push_back(i);
        }
        if (twin_[j] < 0 && buf_[i].s0 == buf_[j].s0 && buf_[i].s1 == buf_[j].s1 &&
            buf_[i].size == buf_[j].size && buf_[i].align == buf_[j].align)
          twin_[j] = static_cast<int64_t>(i);
      }
    height_.assign(sections_, 0);
    remaining_.assign(sections_, 0);
    for (const Buf& b : buf_)
      for (size_t s = b.s0; s < b.s1; ++s) remaining_[s] += b.size;
    gravity_.assign(n_, 0);
    offset_.assign(n_, 0);
    placed_.assign(n_, 0);
    // A static total order: candidates at equal offsets are tried, and may only be placed, in
    // this order (larger area first, then the most crowded sections, then index). The tie
    // rule and the candidate order must agree, or a buffer skipped at an offset is stranded.
    area_.resize(n_);
    // Seeds after the first jitter the areas by up to 25%, so restarts explore differently.
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < n_; ++i) {
      area_[i] = static_cast<long double>(buf_[i].size) * buf_[i].length;
      if (seed != 0) area_[i] *= 1.0L + 0.25L * (rng() % 1024) / 1024.0L;
    }
    order_ = order;
    total_.assign(n_, 0);
    rank_.assign(n_, 0);
    std::vector<size_t> all(n_);
    std::iota(all.begin(), all.end(), 0);
    Rank(all);
    // Per-buffer hash salts, a function of the buffer alone so that every search over this
    // problem (other orders, later rounds) computes the same key for the same state.
    salt_.resize(n_);
    for (size_t i = 0; i < n_; ++i) salt_[i] = Mix(0x243F6A8885A308D3ull + ids_[i]);
    min_start_.assign(sections_, UINT64_MAX);
    candidates_.resize(n_ + 1);
    rest_.resize(n_ + 1);
  }

  void set_rerank(bool on) { rerank_ = on; }

  SearchResult Run(const Problem& problem) {
    SearchResult result;
    bool fits = true;
    for (size_t s = 0; s < sections_; ++s) fits &= remaining_[s] <= capacity_;
    std::vector<size_t> all(n_);
    std::iota(all.begin(), all.end(), 0);
    std::stable_sort(all.begin(), all.end(), [&](size_t a, size_t b) { return buf_[a].s0 < buf_[b].s0; });
    std::vector<std::vector<size_t>> parts;
    if (!SplitInto(all, parts)) parts.push_back(all);
    bool solved = fits;
    if (fits) {
      for (const std::vector<size_t>& part : parts) {
        if (!Solve(part, 0, SIZE_MAX)) {
          solved = false;
          break;
        }
      }
    }
    if (solved) {
      result.outcome = SearchOutcome::kFound;
      result.offsets.assign(problem.buffers.size(), 0);
      for (size_t i = 0; i < n_; ++i) result.offsets[ids_[i]] = offset_[i];
    } else {
      result.outcome = timed_out_ ? SearchOutcome::kTimeout
                       : aborted_ ? SearchOutcome::kNodeLimit
                                  : SearchOutcome::kInfeasible;
    }
    result.nodes = nodes_;
    result.memo_hits = memo_hits_;
    return result;
  }

 private:
  struct Buf {
    uint64_t size, align;
    size_t s0, s1;    // sections [s0, s1)
    uint64_t length;  // lifetime in schedule steps
  };
  struct Candidate {
    uint64_t offset;
    size_t index;
  };

  // Ranks `items` by the static preorder. T, the largest total still to place in a section
  // of the buffer, is read from the current state: a part split off during the search is
  // ranked afresh, as MiniMalloc does, since what crowds its sections has changed.
  void Rank(std::vector<size_t> items) {
    for (size_t i : items) {
      total_[i] = 0;
      for (size_t s = buf_[i].s0; s < buf_[i].s1; ++s) total_[i] = std::max(total_[i], remaining_[s]);
    }
    std::stable_sort(items.begin(), items.end(), [&](size_t a, size_t b) {
      for (char k : order_) {
        if (k == 'A' && area_[a] != area_[b]) return area_[a] > area_[b];
        if (k == 'T' && total_[a] != total_[b]) return total_[a] > total_[b];
        if (k == 'W' && buf_[a].length != buf_[b].length) return buf_[a].length > buf_[b].length;
        size_t ca = buf_[a].s1 - buf_[a].s0, cb = buf_[b].s1 - buf_[b].s0;
        if (k == 'C' && ca != cb) return ca > cb;
        if (k == 'B' && buf_[a].size * ca != buf_[b].size * cb) return buf_[a].size * ca > buf_[b].size * cb;
      }
      return a < b;
    });
    for (size_t k = 0; k < items.size(); ++k) rank_[items[k]] = k;
  }

  // Places every buffer of `items` (unplaced, and not overlapping in time any unplaced
  // buffer outside `items`) at or above `floor`. On failure, everything it placed is undone.
  bool Solve(const std::vector<size_t>& items, uint64_t floor, size_t last_index) {
    if (items.empty()) return true;
    if (++nodes_ > node_limit_) aborted_ = true;
    if ((nodes_ & 1023) == 0 &&
        (std::chrono::steady_clock::now() > deadline_ || (cancel_ && cancel_->load(std::memory_order_relaxed))))
      timed_out_ = true;
    if (timed_out_ || aborted_) return false;

    // One pass over the items: dominance, each section's lowest possible start, candidates.
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i : items) {
      lo = std::min(lo, buf_[i].s0);
      hi = std::max(hi, buf_[i].s1);
    }
    size_t depth = placed_stack_.size();
    std::fill(min_start_.begin() + lo, min_start_.begin() + hi, UINT64_MAX);
    uint64_t* min_start = min_start_.data();  // indexed by section
    std::vector<Candidate>& candidates = candidates_[depth];
    candidates.clear();
    uint64_t min_top = UINT64_MAX;  // the lowest top of any unplaced buffer at its gravity
    // The state's key (see KeyOf): a part's root (no last placement) is a problem of its own
    // whose answer no order changes, so its key leaves the ranks out and any order may reuse
    // it; below the root the ranks decide the tie rule, so they are part of the key.
    const bool part_root = last_index == SIZE_MAX;
    StateKey key = KeyOf(floor, part_root ? 0 : rank_[last_index] + 1);
    for (size_t i : items) {
      const Buf& b = buf_[i];
      if (memo_) AddToKey(key, i, part_root ? 0 : rank_[i] + 1);
      uint64_t g = AlignUp(gravity_[i], b.align);
      min_top = std::min(min_top, g + b.size);
      // Dominance: if i fits entirely below the floor where it would rest, that space stays
      // free forever (later placements are at or above the floor), so moving i down gives a
      // solution at least as good, found in a sibling branch that placed i earlier.
      if (g + b.size <= floor) return false;
      uint64_t start = std::max(g, floor);
      for (size_t s = b.s0; s < b.s1; ++s) min_start[s] = std::min(min_start[s], start);
      if (twin_[i] >= 0 && !placed_[twin_[i]]) continue;  // identical buffers in index order
      // Canonical placements sit exactly at their (aligned) gravity offset, at or above the
      // floor; at the floor itself only in the static order. A buffer whose aligned gravity
      // is below the floor waits until an overlapping placement lifts it. (Aligned: a buffer
      // resting just below the floor may still start above it, and is then a candidate.)
      if (g < floor ||
          (g == floor && last_index != SIZE_MAX && rank_[i] < rank_[last_index])) {
        // It can only be placed once an overlapping placement (at or above the floor) lifts
        // it; with no unplaced buffer overlapping it, it is stranded and this branch is dead.
        bool liftable = false;
        for (size_t j : overlaps_[i])
          if (!placed_[j]) {
            liftable = true;
            break;
          }
        if (!liftable) return false;
        continue;
      }
      if (g + b.size > capacity_) return false;  // it can only go higher
      candidates.push_back({g, i});
    }
    if (memo_ && memo_->Contains(key)) {
      ++memo_hits_;
      return false;
    }
    // Section inference: what remains to be placed in a section stacks above the section's
    // floor, which is at least its height, the global floor and the lowest start of the
    // unplaced buffers there.
    for (size_t s = lo; s < hi; ++s) {
      if (remaining_[s] == 0) continue;
      uint64_t f = std::max({height_[s], floor, min_start[s]});
      if (f + remaining_[s] > capacity_) return false;
    }
    std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
      if (a.offset != b.offset) return a.offset < b.offset;
      return rank_[a.index] < rank_[b.index];
    });
    std::vector<size_t>& rest = rest_[depth];
    for (const Candidate& c : candidates) {
      // Dominance before placing (MiniMalloc's check): a buffer that fits entirely below this
      // offset at its gravity would sit in space no later placement can use, so it must be
      // placed first; candidates are sorted by offset, so none after this one qualifies.
      if (c.offset >= min_top) break;
      size_t mark = placed_stack_.size();
      Place(c.index, c.offset);
      rest.clear();
      for (size_t i : items)
        if (i != c.index) rest.push_back(i);
      // Dynamic decomposition: parts of the rest that share no time section are solved one
      // after another; a failure in one never re-explores the others. Each part is a problem
      // of its own, so its canonical order starts afresh (floor 0): the monotone floor only
      // breaks symmetry within one part.
      std::vector<std::vector<size_t>> parts;
      if (!SplitInto(rest, parts)) parts.push_back(rest);
      bool ok = true;
      bool split = parts.size() > 1;
      std::vector<size_t> saved_rank;
      if (split && rerank_) {
        for (size_t i : rest) saved_rank.push_back(rank_[i]);
        for (const std::vector<size_t>& part : parts) Rank(part);
      }
      for (const std::vector<size_t>& part : parts) {
        if (!Solve(part, split ? 0 : c.offset, split ? SIZE_MAX : c.index)) {
          ok = false;
          break;
        }
      }
      if (!saved_rank.empty())
        for (size_t k = 0; k < rest.size(); ++k) rank_[rest[k]] = saved_rank[k];
      if (ok) return true;
      bool lifted_any = LiftedAny(mark);
      UndoTo(mark);
      if (timed_out_ || aborted_) return false;  // not a proof: nothing memoized
      // Hat-less pruning (MiniMalloc): the candidate raised no unplaced buffer's gravity, so it
      // constrains nothing that a sibling branch could place differently; any solution of this
      // node can move it to this offset first. Its failure is the node's failure.
      if (!lifted_any) break;
    }
    if (memo_) memo_->Insert(key);
    return false;
  }

  // What a state's subtree reads, and so its key: the unplaced buffers, their gravity
  // offsets and static ranks, the floor and the rank of the last placement. Placed buffers
  // matter only through the gravities (a section's height is at most the gravity of every
  // unplaced buffer there), and a part split off below is solved afresh, with an answer that
  // no order changes. Both halves are sums over the buffers, so their order does not matter.
  static StateKey KeyOf(uint64_t floor, uint64_t last_rank) {
    uint64_t x = floor * 0x9E3779B97F4A7C15ull + last_rank;
    return {Mix(x), Mix(x ^ 0x5851F42D4C957F2Dull)};
  }
  void AddToKey(StateKey& key, size_t i, uint64_t rank) const {
    uint64_t x = salt_[i] + gravity_[i] * 0x9E3779B97F4A7C15ull + rank * 0xC2B2AE3D27D4EB4Full;
    key.lo += Mix(x);
    key.hi += Mix(x ^ 0x5851F42D4C957F2Dull);
  }
  static uint64_t Mix(uint64_t x) {  // SplitMix64's finalizer
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  // Splits buffers (sorted by first section) into groups whose section ranges chain
  // together, in time order. Returns false, leaving `parts` empty, when there is one group.
  bool SplitInto(const std::vector<size_t>& items, std::vector<std::vector<size_t>>& parts) {
    size_t reach = 0, groups = 0;
    for (size_t i : items) {
      if (groups == 0 || buf_[i].s0 >= reach) ++groups;
      reach = std::max(reach, buf_[i].s1);
    }
    if (groups <= 1) return false;
    reach = 0;
    for (size_t i : items) {
      if (parts.empty() || buf_[i].s0 >= reach) parts.emplace_back();
      parts.back().push_back(i);
      reach = std::max(reach, buf_[i].s1);
    }
    return true;
  }

  // Whether the placement recorded at `mark` raised any gravity (its own trail entries only:
  // placements after it, by parts solved before a failing one, are still on the stack).
  bool LiftedAny(size_t mark) const {
    size_t end = mark + 1 < placed_stack_.size() ? placed_stack_[mark + 1].second : trail_.size();
    for (size_t t = placed_stack_[mark].second; t < end; ++t)
      if (trail_[t].kind == Change::kGravity) return true;
    return false;
  }

  void UndoTo(size_t mark) {
    while (placed_stack_.size() > mark) {
      auto [i, trail_mark] = placed_stack_.back();
      placed_stack_.pop_back();
      Unplace(i, trail_mark);
    }
  }

  void Place(size_t i, uint64_t o) {
    const Buf& b = buf_[i];
    placed_stack_.push_back({i, trail_.size()});
    placed_[i] = 1;
    offset_[i] = o;
    uint64_t top = o + b.size;
    for (size_t s = b.s0; s < b.s1; ++s) {
      trail_.push_back({Change::kHeight, s, height_[s]});
      height_[s] = top;
      remaining_[s] -= b.size;
    }
    for (size_t j : overlaps_[i]) {
      if (placed_[j] || gravity_[j] >= top) continue;
      trail_.push_back({Change::kGravity, j, gravity_[j]});
      gravity_[j] = top;
    }
  }

  void Unplace(size_t i, size_t trail_mark) {
    const Buf& b = buf_[i];
    placed_[i] = 0;
    for (size_t s = b.s0; s < b.s1; ++s) remaining_[s] += b.size;
    while (trail_.size() > trail_mark) {
      const Change& c = trail_.back();
      if (c.kind == Change::kHeight)
        height_[c.index] = c.old_value;
      else
        gravity_[c.index] = c.old_value;
      trail_.pop_back();
    }
  }

  struct Change {
    enum Kind { kHeight, kGravity } kind;
    size_t index;
    uint64_t old_value;
  };

  uint64_t capacity_;
  std::chrono::steady_clock::time_point deadline_;
  FailureMemo* memo_;  // may be null
  std::vector<uint64_t> salt_;
  std::vector<size_t> ids_;
  size_t n_ = 0, sections_ = 0;
  std::vector<Buf> buf_;
  std::vector<std::vector<size_t>> overlaps_;
  std::vector<int64_t> twin_;
  std::vector<uint64_t> height_, remaining_, gravity_, offset_;
  std::vector<char> placed_;
  std::vector<Change> trail_;
  std::vector<std::pair<size_t, size_t>> placed_stack_;  // (buffer, trail mark)
  // Scratch reused across nodes: per section, and per search depth.
  std::vector<uint64_t> min_start_;
  std::vector<std::vector<Candidate>> candidates_;
  std::vector<std::vector<size_t>> rest_;
  std::vector<long double> area_;
  std::string order_;
  std::vector<uint64_t> total_;
  std::vector<size_t> rank_;
  bool rerank_ = true;
  uint64_t node_limit_;
  const std::atomic<bool>* cancel_;
  uint64_t nodes_ = 0, memo_hits_ = 0;
  bool timed_out_ = false;
  bool aborted_ = false;
};

}  // namespace

namespace {

// Depth-first search is heavy-tailed: a bad early choice under one order can take forever
// where another order finishes at once. So run several static orders round-robin with a
// node limit that doubles each round (restarts, as MiniMalloc does). Worker `w` of `workers`
// takes every workers-th order. Stops at a definite answer, the deadline, `max_nodes` (then
// kTimeout) or `cancel`.
// `memo` serves every order, round and worker: a later round of the same order skips the
// subtrees an earlier one proved empty, and every order reuses the parts (subproblems split
// off by decomposition) that any order proved infeasible. This is what turns restarts from
// starting over into carrying on.
SearchResult RoundRobin(const Problem& problem, uint64_t capacity, std::chrono::steady_clock::time_point deadline,
                        const SearchOptions& options, int worker, int workers, FailureMemo& memo,
                        const std::atomic<bool>* cancel) {
  const uint64_t max_nodes = options.max_nodes;
  // Static orders, most significant key first: T = the largest total size in the buffer's
  // sections, A = size x lifetime, B = size x sections, W = lifetime, C = sections. A trailing
  // '-': parts split off during the search keep the global ranks instead of being re-ranked.
  // Each order alone solves some of MiniMalloc's challenging instances at once and stalls on
  // others (with the memo, 4 s limit: TWA solves A D E F I J K, TWA- A D F G J K, BT A B C D,
  // TCB- A F H; AT, TA, WAT and their '-' forms add no instance these miss). The portfolio is
  // the smallest cover; TWA- first, since the parts it proves infeasible speed TWA up on E.
  static const char* kOrders[] = {"TWA-", "TWA", "TCB-", "BT"};
  std::vector<std::string> orders = options.orders;
  if (orders.empty()) orders.assign(std::begin(kOrders), std::end(kOrders));
  const int count = static_cast<int>(orders.size());
  uint64_t limit = 2 * std::max<uint64_t>(problem.buffers.size(), 16);
  uint64_t nodes = 0, hits = 0;
  for (uint64_t round = 0;; ++round) {
    for (int k = worker; k < count; k += workers) {
      uint64_t budget = max_nodes == 0 ? limit : std::min(limit, max_nodes - nodes);
      std::string order = orders[k];
      bool rerank = order.back() != '-';
      if (!rerank) order.pop_back();
      Search search(problem, capacity, deadline, order, round, budget, options.failure_memo ? &memo : nullptr,
                    cancel);
      search.set_rerank(rerank);
      SearchResult r = search.Run(problem);
      nodes += r.nodes;
      hits += r.memo_hits;
      r.nodes = nodes;
      r.memo_hits = hits;
      if (r.outcome != SearchOutcome::kNodeLimit) return r;
      if (max_nodes != 0 && nodes >= max_nodes) {
        r.outcome = SearchOutcome::kTimeout;
        return r;
      }
    }
    limit *= 2;
  }
}

}  // namespace

SearchResult SearchExact(const Problem& problem, uint64_t capacity,
                         std::chrono::steady_clock::time_point deadline, const SearchOptions& options) {
  if (options.threads <= 1) {
    FailureMemo memo;
    return RoundRobin(problem, capacity, deadline, options, 0, 1, memo, nullptr);
  }
  // A parallel portfolio: the first worker with a definite answer wins and cancels the rest.
  // The workers share one memo (locked), so one order's proofs still help the others.
  int workers = std::min(options.threads, 8);
  FailureMemo memo(FailureMemo::kDefaultMaxBytes, /*thread_safe=*/true);
  std::atomic<bool> cancel{false};
  std::mutex mu;
  SearchResult best;
  best.outcome = SearchOutcome::kTimeout;
  bool decided = false;
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      SearchResult r = RoundRobin(problem, capacity, deadline, options, w, workers, memo, &cancel);
      std::lock_guard<std::mutex> lock(mu);
      if (!decided && r.outcome != SearchOutcome::kTimeout) {
        decided = true;
        best = std::move(r);
        cancel = true;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return best;
}

}  // namespace hexir::planner

// FailureMemo: search states already proven to have no solution, so the exact search never
// explores the same subtree twice (a transposition table holding failures only).
//
// Why it pays: the canonical search reaches identical states along different paths (a part
// split off by decomposition, with the same buffers resting at the same gravity offsets, is
// re-solved after every sibling placement elsewhere in time), and the restarts of the
// portfolio re-walk the failed subtrees of earlier rounds. On MiniMalloc's instance E about
// 2% of nodes hit, each hit pruning a whole failed subtree.
//
// Keys are 128-bit hashes of a state (exact_search.cc defines what a state is). A collision
// would prune a branch that has a solution: the search could then report a timeout or
// infeasibility it should not, never an invalid plan (plans are verified); at 128 bits its
// probability is negligible. The table is bounded: once full, new failures overwrite old
// ones, which only costs time. Thread-compatible; thread-safe when built so (a lock per call:
// a lookup costs far less than the search node around it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hexir::planner {

struct StateKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const StateKey& o) const { return lo == o.lo && hi == o.hi; }
};

class FailureMemo {
 public:
  // `max_bytes` bounds the table (16 bytes a slot, at least 1,024 slots); it starts at 16 KiB
  // and doubles on demand.
  static constexpr size_t kDefaultMaxBytes = size_t{32} << 20;
  explicit FailureMemo(size_t max_bytes = kDefaultMaxBytes, bool thread_safe = false);

  bool Contains(const StateKey& key) const;
  void Insert(const StateKey& key);
  size_t size() const;

 private:
  bool ContainsLocked(const StateKey& key) const;
  void InsertLocked(const StateKey& key);
  static constexpr int kProbes = 8;  // linear probing window
  void Grow();

  std::vector<StateKey> slots_;  // {0, 0} is empty; keys are stored with lo forced odd
  size_t used_ = 0, max_slots_;
  bool thread_safe_;
  mutable std::mutex mu_;
};

}  // namespace hexir::planner

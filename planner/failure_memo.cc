#include "planner/failure_memo.h"

#include <algorithm>

namespace hexir::planner {
namespace {

StateKey Stored(const StateKey& key) { return {key.lo | 1, key.hi}; }

}  // namespace

FailureMemo::FailureMemo(size_t max_bytes, bool thread_safe)
    : slots_(1024), max_slots_(1024), thread_safe_(thread_safe) {
  while (max_slots_ * 2 * sizeof(StateKey) <= max_bytes) max_slots_ *= 2;  // a power of two
}

bool FailureMemo::Contains(const StateKey& key) const {
  if (!thread_safe_) return ContainsLocked(key);
  std::lock_guard<std::mutex> lock(mu_);
  return ContainsLocked(key);
}

void FailureMemo::Insert(const StateKey& key) {
  if (!thread_safe_) return InsertLocked(key);
  std::lock_guard<std::mutex> lock(mu_);
  InsertLocked(key);
}

size_t FailureMemo::size() const {
  if (!thread_safe_) return used_;
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

bool FailureMemo::ContainsLocked(const StateKey& key) const {
  StateKey k = Stored(key);
  size_t mask = slots_.size() - 1;
  for (int p = 0; p < kProbes; ++p) {
    const StateKey& s = slots_[(k.hi + p) & mask];
    if (s == k) return true;
    if (s.lo == 0) return false;
  }
  return false;
}

void FailureMemo::InsertLocked(const StateKey& key) {
  if (2 * (used_ + 1) > slots_.size() && slots_.size() < max_slots_) Grow();
  StateKey k = Stored(key);
  for (;;) {
    size_t mask = slots_.size() - 1;
    for (int p = 0; p < kProbes; ++p) {
      StateKey& s = slots_[(k.hi + p) & mask];
      if (s == k) return;
      if (s.lo == 0) {
        s = k;
        ++used_;
        return;
      }
    }
    if (slots_.size() >= max_slots_) break;
    Grow();  // a full window below the bound: make room rather than forget
  }
  slots_[k.hi & (slots_.size() - 1)] = k;  // at the bound: the newest failure replaces one
}

void FailureMemo::Grow() {
  std::vector<StateKey> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, StateKey{});
  used_ = 0;
  for (const StateKey& s : old)
    if (s.lo != 0) InsertLocked(s);
}

}  // namespace hexir::planner

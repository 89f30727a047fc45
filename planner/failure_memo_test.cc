#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "planner/failure_memo.h"

namespace hexir::planner {
namespace {

std::vector<StateKey> RandomKeys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<StateKey> keys(n);
  for (StateKey& k : keys) k = {rng(), rng()};
  return keys;
}

TEST_CASE("the failure memo finds what it holds and nothing else", "[planner]") {
  FailureMemo memo;
  std::vector<StateKey> in = RandomKeys(50000, 1), out = RandomKeys(50000, 2);
  for (const StateKey& k : in) memo.Insert(k);
  for (const StateKey& k : in) memo.Insert(k);  // inserting twice keeps one entry
  CHECK(memo.size() == in.size());
  size_t found = 0, false_hits = 0;
  for (const StateKey& k : in) found += memo.Contains(k);
  for (const StateKey& k : out) false_hits += memo.Contains(k);
  CHECK(found == in.size());  // below its bound nothing is dropped, across every growth
  CHECK(false_hits == 0);
  // Keys that differ in one half only are different states.
  CHECK_FALSE(memo.Contains({in[0].lo, in[0].hi + 1}));
  CHECK_FALSE(memo.Contains({in[0].lo + 2, in[0].hi}));
}

TEST_CASE("a full failure memo stays within its bound and keeps the newest failures", "[planner]") {
  FailureMemo memo(/*max_bytes=*/16 * 1024);  // 1,024 slots
  std::vector<StateKey> keys = RandomKeys(100000, 3);
  for (const StateKey& k : keys) memo.Insert(k);
  CHECK(memo.size() <= 1024);
  // Each insert lands in its probe window, replacing an older entry when the window is full;
  // the newest is always there, and most recent ones (a later insert may evict one).
  CHECK(memo.Contains(keys.back()));
  size_t recent = 0;
  for (size_t i = keys.size() - 100; i < keys.size(); ++i) recent += memo.Contains(keys[i]);
  CHECK(recent >= 90);
  size_t false_hits = 0;
  for (const StateKey& k : RandomKeys(10000, 4)) false_hits += memo.Contains(k);
  CHECK(false_hits == 0);
}

}  // namespace
}  // namespace hexir::planner

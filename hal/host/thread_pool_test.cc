#include "hal/host/thread_pool.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

namespace hexir::hal {
namespace {

void Mark(void* ctx, uint32_t begin, uint32_t end) {
  auto* hits = static_cast<std::vector<std::atomic<int>>*>(ctx);
  for (uint32_t i = begin; i < end; ++i) (*hits)[i].fetch_add(1);
}

TEST_CASE("ParallelFor covers every index exactly once", "[hal]") {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (uint32_t n : {1u, 2u, 7u, 64u, 1000u}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, Mark, &hits);
      for (uint32_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
    }
  }
}

// Each thread runs its own contiguous share first (the caller the first half, the worker the
// second), so a thread meets the same workgroups, and their data, on every run; a thread that
// finishes early takes the rest of another's share.
TEST_CASE("ParallelFor gives each thread a contiguous share and steals when one is idle", "[hal]") {
  ThreadPool pool(2);
  struct Ctx {
    std::thread::id ids[8];
    std::thread::id caller = std::this_thread::get_id();
    bool slow_second_half = false;
  } ctx;
  auto record = [](void* p, uint32_t begin, uint32_t end) {
    auto* c = static_cast<Ctx*>(p);
    for (uint32_t i = begin; i < end; ++i) {
      c->ids[i] = std::this_thread::get_id();
      // Even work: every piece takes long enough (50 ms) that the worker is awake before the
      // caller reaches its share, even under sanitizers on a loaded machine.
      std::this_thread::sleep_for(std::chrono::milliseconds(c->slow_second_half && i >= 4 ? 200 : 50));
    }
  };
  pool.ParallelFor(8, record, &ctx);
  for (int i = 0; i < 4; ++i) CHECK(ctx.ids[i] == ctx.caller);
  for (int i = 4; i < 8; ++i) CHECK(ctx.ids[i] != ctx.caller);
  // The worker's pieces are slow: the caller finishes its own and takes some of the worker's.
  ctx.slow_second_half = true;
  pool.ParallelFor(8, record, &ctx);
  int stolen = 0;
  for (int i = 4; i < 8; ++i) stolen += ctx.ids[i] == ctx.caller;
  CHECK(stolen >= 1);
  CHECK(ctx.ids[4] != ctx.caller);  // the worker started its own share at its beginning
}

TEST_CASE("concurrent ParallelFor calls from several threads all complete", "[hal]") {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::vector<std::vector<std::atomic<int>>> hits(4);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(500);
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      for (int rep = 0; rep < 200; ++rep) pool.ParallelFor(500, Mark, &hits[c]);
    });
  for (auto& t : callers) t.join();
  for (auto& h : hits)
    for (auto& x : h) REQUIRE(x.load() == 200);
}

}  // namespace
}  // namespace hexir::hal

#include "hal/host/thread_pool.h"

#include <catch2/catch.hpp>
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

#include <catch2/catch.hpp>
#include <random>

#include "planner/best_fit.h"
#include "planner/schedule.h"
#include "planner/lower_bound.h"
#include "planner/test_util.h"
#include "planner/verifier.h"

namespace hexir::planner {
namespace {

using testing::Buf;

TEST_CASE("best-fit packs a chain into two slots", "[planner]") {
  // A chain a -> b -> c -> d where each buffer dies at its consumer:
  //
  //   offset  0   100  200
  //   step 0  [a  ]
  //   step 1  [a  ][b  ]
  //   step 2  [c  ][b  ]
  //   step 3  [c  ][d  ]
  Problem p;
  p.buffers = {Buf(100, 0, 1), Buf(100, 1, 2), Buf(100, 2, 3), Buf(100, 3, 3)};
  auto plan = SolveBestFit(p);
  REQUIRE(plan.ok());
  REQUIRE(Verify(p, *plan).ok());
  CHECK(plan->offsets == std::vector<uint64_t>{0, 100, 0, 100});
  CHECK(plan->space_sizes[0] == 200);
  CHECK(MaxLoadLowerBound(p)[0] == 200);
}

TEST_CASE("best-fit reuses the tightest gap and honours alignment", "[planner]") {
  //   offset  0        64   96       192
  //   step 0  [big              ]           big: 192 bytes, live 0..0
  //   step 1  [x (60)  ]   [y(64)   ]       placed into big's memory once it is dead
  Problem p;
  p.buffers = {Buf(192, 0, 0), Buf(60, 1, 1, 64), Buf(64, 1, 1, 32)};
  auto plan = SolveBestFit(p);
  REQUIRE(plan.ok());
  REQUIRE(Verify(p, *plan).ok());
  CHECK(plan->offsets[0] == 0);
  CHECK(plan->offsets[2] == 0);   // the larger of the two goes first, lowest offset
  CHECK(plan->offsets[1] == 64);  // 64-aligned after y
  CHECK(plan->space_sizes[0] == 192);
}

TEST_CASE("spaces are planned independently", "[planner]") {
  Problem p;
  p.buffers = {Buf(10, 0, 5), Buf(20, 0, 5)};
  p.buffers[1].space = 1;
  auto plan = SolveBestFit(p);
  REQUIRE(plan.ok());
  CHECK(plan->offsets == std::vector<uint64_t>{0, 0});
  CHECK(plan->space_sizes == std::vector<uint64_t>{10, 20});
}

TEST_CASE("capacity overflow is an error with the numbers", "[planner]") {
  Problem p;
  p.buffers = {Buf(100, 0, 1), Buf(100, 0, 1)};
  p.capacities = {150};
  auto plan = SolveBestFit(p);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == StatusCode::kResourceExhausted);
  CHECK(plan.status().message().find("needs 200 bytes") != std::string::npos);
  CHECK(plan.status().message().find("capacity of 150") != std::string::npos);
}

TEST_CASE("bad requests are refused", "[planner]") {
  Problem p;
  p.buffers = {Buf(8, 0, 1, 3)};
  CHECK(SolveBestFit(p).status().code() == StatusCode::kInvalidArgument);
  p.buffers = {Buf(8, 2, 1)};
  CHECK(SolveBestFit(p).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("the verifier catches overlap and misalignment and out-of-arena", "[planner]") {
  Problem p;
  p.buffers = {Buf(100, 0, 2), Buf(100, 1, 3, 16)};
  Plan plan{{0, 48}, {148}};
  Status s = Verify(p, plan);
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("overlap") != std::string::npos);
  plan = Plan{{0, 104}, {204}};
  CHECK(Verify(p, plan).message().find("not aligned") != std::string::npos);
  plan = Plan{{0, 112}, {200}};
  CHECK(Verify(p, plan).message().find("outside") != std::string::npos);
  plan = Plan{{0, 112}, {212}};
  CHECK(Verify(p, plan).ok());
  // Disjoint lifetimes may share memory.
  p.buffers = {Buf(100, 0, 1), Buf(100, 2, 3)};
  CHECK(Verify(p, Plan{{0, 0}, {100}}).ok());
  // A handoff from a buffer born at the taker's own step (a value recomputed just before the
  // dispatch that overwrites it), whatever their order in the problem.
  p.buffers = {Buf(100, 2, 3), Buf(100, 2, 2)};
  Plan handoff{{0, 0}, {100}};
  handoff.shared_with = {1, -1};
  CHECK(Verify(p, handoff).ok());
  handoff.shared_with = {-1, -1};  // without the handoff they clash
  CHECK(Verify(p, handoff).message().find("overlap") != std::string::npos);
}

TEST_CASE("random problems - best-fit plans always verify and respect the lower bound",
          "[planner]") {
  std::mt19937_64 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    Problem p;
    int n = 1 + static_cast<int>(rng() % 200);
    for (int i = 0; i < n; ++i) {
      int64_t first = static_cast<int64_t>(rng() % 100);
      int64_t last = first + static_cast<int64_t>(rng() % 20);
      uint64_t size = rng() % 5 == 0 ? 0 : 1 + rng() % 4096;
      p.buffers.push_back(Buf(size, first, last, uint64_t{1} << (rng() % 7)));
      p.buffers.back().space = static_cast<uint32_t>(rng() % 2);
    }
    auto plan = SolveBestFit(p);
    REQUIRE(plan.ok());
    REQUIRE(Verify(p, *plan).ok());
    auto lb = MaxLoadLowerBound(p);
    for (size_t s = 0; s < lb.size(); ++s) CHECK(plan->space_sizes[s] >= lb[s]);
    // A deliberately broken copy must be caught: move one live buffer onto another.
    for (size_t i = 0; i + 1 < p.buffers.size(); ++i) {
      const auto& a = p.buffers[i];
      const auto& b = p.buffers[i + 1];
      if (a.size && b.size && a.space == b.space && LifetimesOverlap(a, b) &&
          a.alignment == b.alignment) {
        Plan broken = *plan;
        broken.offsets[i + 1] = broken.offsets[i];
        CHECK_FALSE(Verify(p, broken).ok());
        break;
      }
    }
  }
}

}  // namespace
}  // namespace hexir::planner

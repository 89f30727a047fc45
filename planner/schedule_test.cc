#include "planner/schedule.h"

#include <catch2/catch.hpp>

namespace hexir::planner {
namespace {

// Two independent branches, each a big producer followed by a small reduction:
//   program order: A1 (1000) A2 (1000) B1 (reads A1 -> 10) B2 (reads A2 -> 10)  peak 2000
//   better:        A1 B1 A2 B2                                                   peak 1010
TEST_CASE("the list scheduler interleaves branches to lower the peak", "[planner]") {
  ScheduleGraph g;
  g.num_nodes = 4;
  g.values = {{1000, 0, {2}}, {1000, 1, {3}}, {10, 2, {}, false}, {10, 3, {}, false}};
  std::vector<size_t> program = {0, 1, 2, 3};
  CHECK(PeakMemory(g, program) == 2000);
  std::vector<size_t> order = ScheduleForMemory(g);
  CHECK(order == std::vector<size_t>{0, 2, 1, 3});
  CHECK(PeakMemory(g, order) == 1000);
}

TEST_CASE("the scheduler respects dependences", "[planner]") {
  // A chain 0 -> 1 -> 2 with a side input to 2 produced by 3 (listed last).
  ScheduleGraph g;
  g.num_nodes = 4;
  g.values = {{8, 0, {1}}, {8, 1, {2}}, {8, 3, {2}}, {8, 2, {}}};
  std::vector<size_t> order = ScheduleForMemory(g);
  REQUIRE(order.size() == 4);
  auto pos = [&](size_t n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  CHECK(pos(0) < pos(1));
  CHECK(pos(1) < pos(2));
  CHECK(pos(3) < pos(2));
}

}  // namespace
}  // namespace hexir::planner

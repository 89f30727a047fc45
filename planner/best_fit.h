// Best-fit-decreasing: buffers are placed largest first (ties: earlier first, then index),
// each at the lowest-waste gap among the buffers already placed whose lifetimes overlap it.
//
// Origin: the classic heuristic used by TFLite's arena planner and XLA's heap simulator.
// Complexity O(n^2 log n) in the worst case (each placement scans its conflicts). Known weak
// spot: on adversarial instances it can be 30-40% above the lower bound; a better solver is a
// later step. Deterministic: no hash-map order anywhere.
#pragma once

#include "base/status.h"
#include "planner/plan.h"
#include "planner/problem.h"

namespace hexir::planner {

// Fails with RESOURCE_EXHAUSTED, naming the space, the size needed and the capacity, when a
// space's capacity is exceeded.
StatusOr<Plan> SolveBestFit(const Problem& problem);

}  // namespace hexir::planner

// The independent verifier: checks a plan against its problem without trusting the solver.
// Every buffer aligned, inside its space's arena (and capacity), and no two buffers of one
// space that are live at a common step overlap in memory. O(n log n + k) with k overlapping
// pairs reported; used by every planner test and by the compiler in debug builds.
#pragma once

#include "hexir/status.h"
#include "planner/plan.h"
#include "planner/problem.h"

namespace hexir::planner {

// OK, or INTERNAL naming the first violation with both buffers, their offsets and lifetimes.
Status Verify(const Problem& problem, const Plan& plan);

}  // namespace hexir::planner

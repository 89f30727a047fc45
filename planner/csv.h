// The MiniMalloc CSV format: a header naming the columns `id,lower,upper,size` (any order,
// `offset` allowed and ignored), then one buffer per row, live over [lower, upper). Solutions
// are written as the same rows with an `offset` column.
#pragma once

#include <string>

#include "hexir/status.h"
#include "planner/plan.h"
#include "planner/problem.h"

namespace hexir::planner {

// INVALID_ARGUMENT names the line and the problem (missing column, bad number, empty interval).
StatusOr<Problem> ParseMiniMallocCsv(const std::string& text);
std::string FormatSolutionCsv(const Problem& problem, const Plan& plan);

}  // namespace hexir::planner

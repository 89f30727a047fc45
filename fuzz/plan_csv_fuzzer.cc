// libFuzzer target: hexir-plan's CSV reader and the planner behind it. Whatever the reader
// accepts, the solver must plan and the independent verifier must accept.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "planner/csv.h"
#include "planner/solver.h"
#include "planner/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto problem = hexir::planner::ParseMiniMallocCsv(text);
  if (!problem.ok() || problem->buffers.size() > 64) return 0;
  for (const auto& b : problem->buffers)
    if (b.size > (uint64_t{1} << 40) || b.last > (int64_t{1} << 40)) return 0;
  hexir::planner::SolveOptions options;
  options.time_limit_seconds = 0.01;
  auto solution = hexir::planner::Solve(*problem, options);
  if (!solution.ok()) return 0;
  if (!hexir::planner::Verify(*problem, solution->plan).ok()) std::abort();
  return 0;
}

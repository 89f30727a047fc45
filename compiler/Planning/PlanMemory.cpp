//===- PlanMemory.cpp - offsets for every buffer --------------------------===//
#include "Planning/PlanMemory.h"

#include "Planning/GraphValues.h"

#include "planner/solver.h"
#include "planner/verifier.h"

using namespace mlir;
using namespace mlir::hexir;
namespace planner = ::hexir::planner;

FailureOr<MemoryPlan> mlir::hexir::planMemory(func::FuncOp graph, const BufferLiveness &live,
                                              const TargetDescription &target, const PlanMemoryOptions &options,
                                              planner::PlanReport &report) {
  planner::SolveOptions solveOptions;
  solveOptions.time_limit_seconds = options.timeLimit;
  solveOptions.max_search_nodes = options.searchNodes;
  auto solution = planner::Solve(live.problem, solveOptions);
  if (!solution.ok())
    return graph.emitError() << "memory planning failed: " << solution.status().message();
  MemoryPlan result;
  result.plan = solution->plan;
  if (options.verify) {
    ::hexir::Status verified = planner::Verify(live.problem, result.plan);
    if (!verified.ok())
      return graph.emitError() << "memory plan failed verification (compiler bug): " << verified.message();
  }
  result.arenaOfSpace.assign(target.memorySpaces.size(), -1);
  for (uint32_t space = 0; space < target.memorySpaces.size(); ++space) {
    uint64_t bytes = space < result.plan.space_sizes.size() ? result.plan.space_sizes[space] : 0;
    if (bytes == 0)
      continue;
    result.arenaOfSpace[space] = static_cast<int32_t>(result.arenas.size());
    uint64_t alignment = std::max<uint64_t>(kBufferAlignment, target.memorySpaces[space].alignment);
    result.arenas.push_back({space, bytes, static_cast<uint32_t>(alignment)});
  }

  // The report speaks of the space intermediates are planned in.
  uint32_t space = target.arenaSpace;
  report.arena_bytes = space < result.plan.space_sizes.size() ? result.plan.space_sizes[space] : 0;
  if (space < solution->spaces.size()) {
    report.lower_bound_bytes = solution->spaces[space].lower_bound_bytes;
    report.method = solution->spaces[space].method;
    report.quality = solution->spaces[space].Quality();
  }
  for (size_t b = 0; b < live.problem.buffers.size(); ++b) {
    const planner::BufferRequest &r = live.problem.buffers[b];
    int64_t shared = result.plan.shared(b);
    report.buffers.push_back({r.name, r.size, result.plan.offsets[b], r.first, r.last,
                              shared >= 0 ? live.problem.buffers[shared].name : std::string()});
  }
  return result;
}

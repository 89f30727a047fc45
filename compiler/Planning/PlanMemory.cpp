//===- PlanMemory.cpp - offsets for every buffer --------------------------===//
#include "Planning/PlanMemory.h"

#include "Planning/GraphValues.h"

#include "planner/solver.h"
#include "planner/verifier.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::hexir;
namespace planner = ::hexir::planner;

namespace {

// "'/conv1/Conv', '/relu/Relu'": the source ops a dispatch covers (the first three), or its
// kernel's name when it has none.
std::string coveredNames(CallTirOp d) {
  SmallVector<std::string> names = sourceNames(d);
  if (names.empty())
    return "'" + dispatchName(d) + "'";
  std::string text;
  for (size_t i = 0; i < names.size() && i < 3; ++i)
    text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > 3)
    text += ", ...";
  return text;
}

// Why the buffers of memory space `space` do not fit `capacity` bytes: the step where the live
// bytes peak (in the smallest plan found, whose sharing is honoured), the dispatch there, the
// largest buffers live there, and the smallest arena the planner found.
void explainOverCapacity(InFlightDiagnostic &diag, const BufferLiveness &live, const TargetDescription &target,
                         uint32_t space, uint64_t capacity, uint64_t constants, const planner::Plan &smallest) {
  int64_t steps = live.copyStep + 1;
  std::vector<uint64_t> load(static_cast<size_t>(steps), 0);
  for (size_t b = 0; b < live.problem.buffers.size(); ++b) {
    const planner::BufferRequest &r = live.problem.buffers[b];
    if (r.space != space || smallest.shared(b) >= 0)
      continue;  // another space, or the memory of a buffer it took over (counted there)
    for (int64_t t = r.first; t <= r.last; ++t)
      load[static_cast<size_t>(t)] += r.size;
  }
  auto peakAt = std::max_element(load.begin(), load.end());
  int64_t peak = peakAt - load.begin();
  const std::string &name = target.memorySpaces[space].name;
  diag << "the arena in memory space '" << name << "' peaks at " << withThousands(*peakAt) << " bytes at dispatch " << peak;
  for (CallTirOp d : live.dispatches)
    if (live.stepOf.lookup(d) == peak)
      diag << " (" << coveredNames(d) << ")";
  diag << ", over its capacity of " << withThousands(capacity) << " bytes";
  if (constants > 0)
    diag << " (what is left of " << withThousands(capacity + constants) << " after " << withThousands(constants)
         << " bytes of constants)";
  diag << "; live there:";
  SmallVector<size_t> there;
  for (size_t b = 0; b < live.problem.buffers.size(); ++b) {
    const planner::BufferRequest &r = live.problem.buffers[b];
    if (r.space == space && smallest.shared(b) < 0 && r.first <= peak && peak <= r.last)
      there.push_back(b);
  }
  llvm::stable_sort(there, [&](size_t a, size_t b) { return live.problem.buffers[a].size > live.problem.buffers[b].size; });
  constexpr size_t kShown = 5;
  for (size_t k = 0; k < there.size() && k < kShown; ++k) {
    const planner::BufferRequest &r = live.problem.buffers[there[k]];
    // The dispatch that made the value (a copy moved back or recomputed starts later).
    auto producer = live.bufferValue[there[k]].getDefiningOp<CallTirOp>();
    if (producer)
      diag << (k ? "; " : " ") << "the output of dispatch " << live.stepOf.lookup(producer) << " ("
           << coveredNames(producer) << ")";
    else  // a loop's or an if's result, a trip number
      diag << (k ? "; " : " ") << "'" << r.name << "'";
    for (const BufferLiveness::Move &m : live.moves)
      if (m.reloaded == there[k])
        diag << (m.recompute ? ", recomputed before dispatch " : ", moved back before dispatch ") << m.inBefore;
    diag << ", " << withThousands(r.size) << " B, last used by dispatch " << r.last;
  }
  if (there.size() > kShown)
    diag << ", and " << there.size() - kShown << " more";
  // Why moving values out (to a space the machine can copy to and back) or recomputing them
  // did not suffice.
  bool canMove = llvm::any_of(target.transfers, [&](const SpaceTransfer &t) { return t.from == space && t.to != space; });
  bool idle = llvm::any_of(there, [&](size_t b) {
    const planner::BufferRequest &r = live.problem.buffers[b];
    bool used = r.first == peak || r.last == peak;
    forEachReader(live.bufferValue[b], [&](Operation *user) {
      used |= (isa<func::ReturnOp>(user) ? live.copyStep : live.stepOf.lookup(user)) == peak;
    });
    used |= live.hasControlFlow();  // (moving values is not done across loops and branches)
    return !used;
  });
  if (!live.moves.empty())
    diag << " (after moving or recomputing " << live.moves.size() << (live.moves.size() == 1 ? " value" : " values")
         << ")";
  if (!idle)
    diag << "; each of them is read or written by that dispatch, so none can be moved out or recomputed";
  else if (canMove)
    diag << "; moving or recomputing the values idle there was not enough";
  else
    diag << "; the values idle there cannot be recomputed (only elementwise results of values still held where they "
            "are needed again can) and the target has no memory space to move them to";
  uint64_t needed = space < smallest.space_sizes.size() ? smallest.space_sizes[space] : 0;
  diag << "; the smallest plan found needs " << withThousands(needed) << " bytes: raise the budget of '" << name
       << "' to at least " << withThousands(needed + constants) << " bytes (--memory-budget " << name << "="
       << needed + constants << "), or compile the model for a smaller input";
}

} // namespace

FailureOr<MemoryPlan> mlir::hexir::planMemory(func::FuncOp graph, const BufferLiveness &live,
                                              const TargetDescription &target, const PlanMemoryOptions &options,
                                              planner::PlanReport &report) {
  planner::SolveOptions solveOptions;
  solveOptions.time_limit_seconds = options.timeLimit;
  solveOptions.max_search_nodes = options.searchNodes;
  // Capacities: what the target (or --memory-budget) gives each space, less the constants
  // resident in it.
  planner::Problem problem = live.problem;
  uint64_t constants = report.constant_bytes + report.filled_constant_bytes;
  std::vector<uint64_t> taken(target.memorySpaces.size(), 0);
  if (target.constantSpace < taken.size())
    taken[target.constantSpace] = constants;
  problem.capacities.assign(target.memorySpaces.size(), 0);
  for (uint32_t s = 0; s < target.memorySpaces.size(); ++s) {
    uint64_t capacity = target.memorySpaces[s].capacity;
    if (capacity == 0)
      continue;
    if (taken[s] >= capacity)
      return graph.emitError() << "the constants take " << withThousands(taken[s]) << " bytes, over the capacity of "
                               << withThousands(capacity) << " bytes of memory space '" << target.memorySpaces[s].name
                               << "': raise its budget to more than that (--memory-budget "
                               << target.memorySpaces[s].name << "=BYTES)";
    problem.capacities[s] = capacity - taken[s];
  }
  report.capacity_bytes = target.arenaSpace < problem.capacities.size() ? problem.capacities[target.arenaSpace] : 0;
  auto solution = planner::Solve(problem, solveOptions);
  if (!solution.ok() && solution.status().code() == ::hexir::StatusCode::kResourceExhausted) {
    // Over a capacity: the smallest plan the planner can find without one, and why.
    planner::Problem unbounded = live.problem;
    unbounded.capacities.clear();
    auto smallest = planner::Solve(unbounded, solveOptions);
    if (!smallest.ok())
      return graph.emitError() << "memory planning failed: " << smallest.status().message();
    for (uint32_t s = 0; s < problem.capacities.size(); ++s) {
      uint64_t size = s < smallest->plan.space_sizes.size() ? smallest->plan.space_sizes[s] : 0;
      if (problem.capacities[s] != 0 && size > problem.capacities[s]) {
        InFlightDiagnostic diag = graph.emitError();
        explainOverCapacity(diag, live, target, s, problem.capacities[s], taken[s], smallest->plan);
        return diag;
      }
    }
    // The unbounded search found a plan that fits where the bounded one did not (a different
    // search path): take it.
    solution = std::move(smallest);
  }
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
  // A space holding only empty tensors (a loop's carried [0] value) still gets its arena, of 0
  // bytes: every slot names an arena that exists.
  std::vector<bool> used(target.memorySpaces.size());
  for (const planner::BufferRequest &r : live.problem.buffers)
    if (r.space < used.size())
      used[r.space] = true;
  for (uint32_t space = 0; space < target.memorySpaces.size(); ++space) {
    uint64_t bytes = space < result.plan.space_sizes.size() ? result.plan.space_sizes[space] : 0;
    if (bytes == 0 && !used[space])
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

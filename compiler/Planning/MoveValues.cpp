//===- MoveValues.cpp - values moved out of a full memory space and back ---===//
#include "Planning/MoveValues.h"

#include "Planning/GraphValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "planner/lower_bound.h"
#include "planner/solver.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace mlir::hexir;
namespace planner = ::hexir::planner;

namespace {

// Enough for any graph the tests and benchmarks have; each move re-plans the arena.
constexpr int kMaxMoves = 128;

// What a space may hold besides the constants resident in it; 0: unbounded.
uint64_t capacityOf(const TargetDescription &target, uint32_t space, uint64_t constantBytes) {
  uint64_t capacity = target.memorySpaces[space].capacity;
  if (capacity == 0)
    return 0;
  uint64_t taken = space == target.constantSpace ? constantBytes : 0;
  return capacity > taken ? capacity - taken : 1;  // over by the constants: planMemory says so
}

// A space the arena's values can be copied to and back from, with both transfers.
std::optional<std::pair<uint32_t, double>> parkingSpace(const TargetDescription &target) {
  for (const SpaceTransfer &out : target.transfers) {
    if (out.from != target.arenaSpace || out.to == target.arenaSpace)
      continue;
    for (const SpaceTransfer &back : target.transfers)
      if (back.from == out.to && back.to == target.arenaSpace) {
        double perByte = (out.bytesPerSecond > 0 ? 1.0 / out.bytesPerSecond : 0) +
                         (back.bytesPerSecond > 0 ? 1.0 / back.bytesPerSecond : 0);
        return std::make_pair(out.to, perByte);
      }
  }
  return std::nullopt;
}

// Whether buffer `b` holds a value cheap to compute again where it is needed: the only result
// of a dispatch whose kernel has no reduction (elementwise and broadcast work, one pass over
// its output) and that reads only graph inputs and constants, which are there at any step.
bool recomputable(const BufferLiveness &live, size_t b) {
  Value value = live.bufferValue[b];
  auto it = live.bufferOf.find(value);
  if (it == live.bufferOf.end() || it->second != b)
    return false;  // a reloaded copy: its value was made elsewhere
  auto d = value.getDefiningOp<CallTirOp>();
  if (!d || d->getNumResults() != 1)
    return false;
  for (Value in : d.getInputs()) {
    Value root = rootOf(in);
    if (!isa<BlockArgument>(root) && !root.getDefiningOp<arith::ConstantOp>())
      return false;
  }
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(d, d.getCalleeAttr());
  if (!kernel || kernel.isDeclaration())
    return false;
  bool cheap = true;
  kernel.walk([&](linalg::LinalgOp op) { cheap &= op.getNumParallelLoops() == op.getNumLoops(); });
  return cheap;
}

double latencyOf(const TargetDescription &target, uint32_t park) {
  double seconds = 0;
  for (const SpaceTransfer &t : target.transfers)
    if ((t.from == target.arenaSpace && t.to == park) || (t.from == park && t.to == target.arenaSpace))
      seconds += t.latencySeconds;
  return seconds;
}

} // namespace

void mlir::hexir::moveValuesToFit(BufferLiveness &live, const TargetDescription &target, uint64_t constantBytes,
                                  const PlanMemoryOptions &options, planner::PlanReport &report) {
  uint32_t space = target.arenaSpace;
  uint64_t capacity = capacityOf(target, space, constantBytes);
  std::optional<std::pair<uint32_t, double>> park = parkingSpace(target);
  if (capacity == 0)
    return;
  planner::Problem &problem = live.problem;
  // Steps each buffer's value is read at (the final copies read at copyStep), sorted.
  std::vector<std::vector<int64_t>> readers(problem.buffers.size());
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    forEachReader(live.bufferValue[b], [&](Operation *user) {
      readers[b].push_back(isa<func::ReturnOp>(user) ? live.copyStep : live.stepOf.lookup(user));
    });
    llvm::sort(readers[b]);
  }
  // Each attempt re-plans the arena. The first has planMemory's whole budget (a plan that fits
  // as it is moves nothing); later ones a smaller search, bounded by nodes so the moves chosen
  // do not depend on the clock.
  planner::SolveOptions solve;
  solve.time_limit_seconds = options.timeLimit;
  solve.max_search_nodes = options.searchNodes;
  for (int move = 0; move < kMaxMoves; ++move) {
    problem.capacities.assign(target.memorySpaces.size(), 0);
    problem.capacities[space] = capacity;
    if (park)
      problem.capacities[park->first] = capacityOf(target, park->first, constantBytes);
    std::vector<uint64_t> bound = planner::MaxLoadLowerBound(problem);
    uint64_t parkCapacity = park ? problem.capacities[park->first] : 0;
    if (park && parkCapacity != 0 && park->first < bound.size() && bound[park->first] > parkCapacity)
      break;  // the space values move to is full itself: planMemory explains
    if (space < bound.size() && bound[space] <= capacity) {
      auto solved = planner::Solve(problem, solve);
      if (solved.ok() || solved.status().code() != ::hexir::StatusCode::kResourceExhausted)
        break;
      solve.max_search_nodes = std::max<uint64_t>(options.searchNodes / 16, 1000);
    }
    // The step where the arena's live bytes peak (a buffer that takes over a dying one's memory
    // counts once).
    std::vector<uint64_t> load(static_cast<size_t>(live.copyStep + 1), 0);
    for (const planner::BufferRequest &r : problem.buffers) {
      if (r.space != space)
        continue;
      bool takesOver = r.may_share_with >= 0 && problem.buffers[r.may_share_with].last == r.first;
      for (int64_t t = takesOver ? r.first + 1 : r.first; t <= r.last; ++t)
        load[static_cast<size_t>(t)] += r.size;
    }
    int64_t peak = std::max_element(load.begin(), load.end()) - load.begin();
    // The largest value live across the peak but not read there, over its idle interval:
    // recomputed if its dispatch is cheap and reads only inputs and constants, else moved out
    // (when there is a space to move to).
    std::optional<size_t> best;
    int64_t bestOut = 0, bestIn = 0;
    bool bestRecompute = false;
    for (size_t b = 0; b < problem.buffers.size(); ++b) {
      const planner::BufferRequest &r = problem.buffers[b];
      if (r.space != space || r.size == 0 || r.may_share_with >= 0 || !(r.first < peak && peak < r.last) ||
          b >= readers.size())
        continue;
      // A buffer already cut short by a move keeps its value until that move's copy out: moving
      // it again would let that copy read memory another buffer has taken. (Its reloaded copy
      // is a buffer of its own and may move.)
      if (llvm::any_of(live.moves, [&](const BufferLiveness::Move &m) { return m.buffer == b; }))
        continue;
      int64_t out = r.first, in = -1;
      for (int64_t step : readers[b]) {
        if (step == peak) {
          in = -1;
          break;
        }
        if (step < peak)
          out = std::max(out, step);
        else if (in < 0)
          in = step;
      }
      if (in < 0)
        continue;
      bool recompute = recomputable(live, b);
      if (!recompute && !park)
        continue;
      // Recomputing moves no bytes: it wins over a larger value that would have to travel.
      auto better = [&] {
        if (!best || recompute != bestRecompute)
          return !best || recompute;
        const planner::BufferRequest &current = problem.buffers[*best];
        return r.size > current.size || (r.size == current.size && in - out > bestIn - bestOut);
      };
      if (better()) {
        best = b;
        bestOut = out;
        bestIn = in;
        bestRecompute = recompute;
      }
    }
    if (!best)
      break;  // nothing can move: planMemory explains what does not fit
    size_t b = *best;
    planner::BufferRequest original = problem.buffers[b];
    problem.buffers[b].last = bestOut;
    Value value = live.bufferValue[b];
    size_t parkedIndex = SIZE_MAX;
    if (!bestRecompute) {
      planner::BufferRequest parked = original;
      parked.first = bestOut;
      parked.last = bestIn;
      parked.space = park->first;
      parked.name = original.name + " (moved out)";
      parkedIndex = problem.buffers.size();
      problem.buffers.push_back(parked);
      live.bufferValue.push_back(value);
      readers.push_back({});
    }
    planner::BufferRequest reloaded = original;
    reloaded.first = bestIn;
    reloaded.last = original.last;
    reloaded.name = original.name + (bestRecompute ? " (recomputed)" : " (moved back)");
    size_t reloadedIndex = problem.buffers.size();
    problem.buffers.push_back(reloaded);
    live.bufferValue.push_back(value);
    // Readers from bestIn on read the reloaded copy, whose life ends where the value's did: a
    // result that was to take over its memory takes over the copy's.
    std::vector<int64_t> later;
    for (int64_t step : readers[b])
      if (step >= bestIn)
        later.push_back(step);
    readers[b].erase(std::remove_if(readers[b].begin(), readers[b].end(), [&](int64_t s) { return s >= bestIn; }),
                     readers[b].end());
    readers.push_back(later);
    for (planner::BufferRequest &r : problem.buffers)
      if (r.may_share_with == static_cast<int64_t>(b) && r.first == original.last)
        r.may_share_with = static_cast<int64_t>(reloadedIndex);
    live.moves.push_back({b, parkedIndex, reloadedIndex, bestOut, bestIn, bestRecompute});
    if (bestRecompute) {
      report.moves.push_back({original.name, original.size, bestOut, bestIn, ""});
      report.recomputed_bytes += original.size;
    } else {
      report.moves.push_back({original.name, original.size, bestOut, bestIn, target.memorySpaces[park->first].name});
      report.moved_bytes += 2 * original.size;
      report.transfer_seconds += original.size * park->second + latencyOf(target, park->first);
    }
  }
  problem.capacities.assign(target.memorySpaces.size(), 0);
  for (uint32_t s = 0; s < target.memorySpaces.size(); ++s)
    problem.capacities[s] = target.memorySpaces[s].capacity;
}

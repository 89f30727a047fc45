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
struct Parking {
  uint32_t space;
  SpaceTransfer out, back;
};

std::optional<Parking> parkingSpace(const TargetDescription &target) {
  for (const SpaceTransfer &out : target.transfers) {
    // Not into a space only --place named for the diagnostic: the device may not hold it.
    if (out.from != target.arenaSpace || out.to == target.arenaSpace || !target.memorySpaces[out.to].kernelVisible)
      continue;
    for (const SpaceTransfer &back : target.transfers)
      if (back.from == out.to && back.to == target.arenaSpace)
        return Parking{out.to, out, back};
  }
  return std::nullopt;
}

// The intermediates a recomputation of `b` at step `in` reads: the buffers holding its
// dispatch's inputs there. None when `b` cannot be recomputed: it must be the only result of a
// dispatch whose kernel has no reduction (elementwise and broadcast work, one pass over its
// output), and every input must still be there at `in` (a graph input, a constant, an output
// already written, or an intermediate whose buffer is live through `in` and was made before it:
// a copy brought back at `in` itself may be written after the recomputation).
std::optional<SmallVector<size_t>> recomputeReads(const BufferLiveness &live, size_t b, int64_t in) {
  Value value = live.bufferValue[b];
  auto it = live.bufferOf.find(value);
  if (it == live.bufferOf.end() || it->second != b)
    return std::nullopt;  // a reloaded copy: its value was made elsewhere
  auto d = value.getDefiningOp<CallTirOp>();
  if (!d || d->getNumResults() != 1)
    return std::nullopt;
  SmallVector<size_t> reads;
  for (Value input : d.getInputs()) {
    Value root = rootOf(input);
    if (isa<BlockArgument>(root) || root.getDefiningOp<arith::ConstantOp>() || live.outputOf.count(root))
      continue;
    if (!live.bufferOf.count(root))
      return std::nullopt;
    size_t there = live.bufferAt(root, in);
    const planner::BufferRequest &r = live.problem.buffers[there];
    if (!(r.first < in && in <= r.last))
      return std::nullopt;
    reads.push_back(there);
  }
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(d, d.getCalleeAttr());
  if (!kernel || kernel.isDeclaration())
    return std::nullopt;
  bool cheap = true;
  kernel.walk([&](linalg::LinalgOp op) { cheap &= op.getNumParallelLoops() == op.getNumLoops(); });
  if (!cheap)
    return std::nullopt;
  return reads;
}

// Seconds the dispatch making `value` takes to run again, by a roofline: its scalar operations
// (each linalg op's iterations times the operations in its body) at the processor's rate, or
// the bytes it reads and writes at the processor's memory rate, whichever is slower.
double recomputeSeconds(Value value, const TargetDescription &target) {
  auto d = value.getDefiningOp<CallTirOp>();
  double flops = 0, bytes = 0;
  for (Value v : d->getOperands())
    bytes += static_cast<double>(byteSize(v.getType()));
  for (Value v : d->getResults())
    bytes += static_cast<double>(byteSize(v.getType()));
  if (auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(d, d.getCalleeAttr()))
    kernel.walk([&](linalg::LinalgOp op) {
      double iterations = 1;
      for (int64_t range : op.getStaticLoopRanges())
        iterations *= range > 0 ? static_cast<double>(range) : 1.0;
      flops += iterations * static_cast<double>(llvm::range_size(op.getBlock()->without_terminator()));
    });
  return std::max(flops / target.compute.effectiveFlopsPerSecond(), bytes / target.compute.effectiveBytesPerSecond());
}

// Seconds to copy `bytes` out to the parking space and back (a transfer of unknown rate counts
// at the processor's memory rate).
double moveSeconds(const TargetDescription &target, const Parking &park, uint64_t bytes) {
  auto seconds = [&](const SpaceTransfer &t) {
    double rate = t.bytesPerSecond > 0 ? t.bytesPerSecond : target.compute.effectiveBytesPerSecond();
    return t.latencySeconds + static_cast<double>(bytes) / rate;
  };
  return seconds(park.out) + seconds(park.back);
}

} // namespace

void mlir::hexir::moveValuesToFit(BufferLiveness &live, const TargetDescription &target, uint64_t constantBytes,
                                  const PlanMemoryOptions &options, planner::PlanReport &report) {
  uint32_t space = target.arenaSpace;
  uint64_t capacity = capacityOf(target, space, constantBytes);
  std::optional<Parking> park = parkingSpace(target);
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
      problem.capacities[park->space] = capacityOf(target, park->space, constantBytes);
    std::vector<uint64_t> bound = planner::MaxLoadLowerBound(problem);
    uint64_t parkCapacity = park ? problem.capacities[park->space] : 0;
    if (park && parkCapacity != 0 && park->space < bound.size() && bound[park->space] > parkCapacity)
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
    // Of the values live across the peak but not read there, the one cheapest to free per
    // byte over its idle interval: recomputed (its dispatch again, by the processor's rates)
    // or moved out and back (the machine's transfer rates), whichever costs less.
    std::optional<size_t> best;
    int64_t bestOut = 0, bestIn = 0;
    bool bestRecompute = false;
    double bestSeconds = 0, bestCost = 0;  // the chosen way's seconds, and per byte freed
    SmallVector<size_t> bestReads;
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
      std::optional<SmallVector<size_t>> reads = recomputeReads(live, b, in);
      double recomputeCost = reads ? recomputeSeconds(live.bufferValue[b], target) : 0;
      double moveCost = park ? moveSeconds(target, *park, r.size) : 0;
      bool recompute = reads && (!park || recomputeCost <= moveCost);
      if (!recompute && !park)
        continue;
      double perByte = (recompute ? recomputeCost : moveCost) / static_cast<double>(r.size);
      auto better = [&] {
        if (!best)
          return true;
        const planner::BufferRequest &current = problem.buffers[*best];
        if (perByte != bestCost)
          return perByte < bestCost;
        return r.size > current.size || (r.size == current.size && in - out > bestIn - bestOut);
      };
      if (better()) {
        best = b;
        bestOut = out;
        bestIn = in;
        bestRecompute = recompute;
        bestSeconds = recompute ? recomputeCost : moveCost;
        bestCost = perByte;
        bestReads = reads && recompute ? *reads : SmallVector<size_t>();
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
      parked.space = park->space;
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
    // The recomputation reads its intermediate inputs at bestIn: a later move of one of them
    // must bring it back by then.
    for (size_t read : bestReads) {
      auto at = llvm::lower_bound(readers[read], bestIn);
      if (at == readers[read].end() || *at != bestIn)
        readers[read].insert(at, bestIn);
    }
    if (bestRecompute) {
      report.moves.push_back({original.name, original.size, bestOut, bestIn, ""});
      report.recomputed_bytes += original.size;
      report.recompute_seconds += bestSeconds;
    } else {
      report.moves.push_back({original.name, original.size, bestOut, bestIn, target.memorySpaces[park->space].name});
      report.moved_bytes += 2 * original.size;
      report.transfer_seconds += bestSeconds;
    }
  }
  problem.capacities.assign(target.memorySpaces.size(), 0);
  for (uint32_t s = 0; s < target.memorySpaces.size(); ++s)
    problem.capacities[s] = target.memorySpaces[s].capacity;
}

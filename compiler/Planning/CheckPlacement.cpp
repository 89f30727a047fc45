//===- CheckPlacement.cpp - every buffer a kernel touches is where it can --===//
#include "Planning/CheckPlacement.h"

#include "Planning/GraphValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Support/DebugStringHelper.h"

#include <cstdio>
#include <optional>

using namespace mlir;
using namespace mlir::hexir;

namespace {

// "the constant 'conv1.weight' (tensor<64x3x7x7xf32>, 37,632 B)".
std::string describe(Value value, bool constant) {
  std::string name;
  Location loc = value.getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto named = dyn_cast<NameLoc>(loc))
    name = " '" + named.getName().str() + "'";
  else if (auto d = value.getDefiningOp<CallTirOp>(); d && !constant)
    name = " '" + bufferName(d, value) + "'";
  return std::string(constant ? "the constant" : "the intermediate") + name + " (" + debugString(value.getType()) +
         ", " + withThousands(byteSize(value.getType())) + " B)";
}

} // namespace

LogicalResult mlir::hexir::checkPlacement(func::FuncOp graph, const BufferLiveness &live,
                                          const TargetDescription &target) {
  const MemorySpaceDescription &arena = target.memorySpaces[target.arenaSpace];
  const MemorySpaceDescription &constants = target.memorySpaces[target.constantSpace];
  if (arena.kernelVisible && constants.kernelVisible)
    return success();
  std::string processor = target.processorName.empty() ? "the " + target.processorKind + " processor"
                                                       : "processor '" + target.processorName + "'";
  auto refuse = [&](CallTirOp d, Value value, bool constant, bool written) {
    uint32_t placed = constant ? target.constantSpace : target.arenaSpace;
    const std::string &space = target.memorySpaces[placed].name;
    uint64_t bytes = byteSize(value.getType());
    // Built whole, then emitted: a diagnostic keeps references to the strings streamed in.
    std::string text;
    llvm::raw_string_ostream diag(text);
    SmallVector<std::string> names = sourceNames(d);
    diag << "dispatch " << live.stepOf.lookup(d) << " (";
    if (names.empty())
      diag << "kernel '" << dispatchName(d) << "'";
    for (size_t i = 0; i < names.size() && i < 3; ++i)
      diag << (i ? ", '" : "'") << names[i] << "'";
    diag << ") " << (written ? "writes " : "reads ") << describe(value, constant) << ", which --place "
         << (constant ? "constants" : "intermediates") << "=" << space << " put in memory space '" << space << "'; "
         << processor << ", which runs its kernel, does not see '" << space << "'";
    std::string seen;
    for (const MemorySpaceDescription &s : target.memorySpaces)
      if (s.kernelVisible)
        seen += (seen.empty() ? "'" : ", '") + s.name + "'";
    diag << " (it sees " << seen << ")";
    // The cheapest transfer the machine file gives from that space to one the kernels see.
    std::optional<SpaceTransfer> best;
    double bestSeconds = 0;
    for (const SpaceTransfer &t : target.transfers) {
      if (t.from != placed || !target.memorySpaces[t.to].kernelVisible)
        continue;
      double seconds = (t.bytesPerSecond > 0 ? bytes / t.bytesPerSecond : 0) + t.latencySeconds;
      if (!best || seconds < bestSeconds) {
        best = t;
        bestSeconds = seconds;
      }
    }
    if (best) {
      char cost[160];
      std::snprintf(cost, sizeof(cost), "%.3f ms (%.3g bytes/s + %.3g s latency)", 1000.0 * bestSeconds,
                    best->bytesPerSecond, best->latencySeconds);
      diag << "; it needs a transfer '" << space << "' -> '" << target.memorySpaces[best->to].name
           << "' before this dispatch, " << cost << " by the machine file, on every run";
    } else {
      diag << "; the machine file gives no transfer from '" << space << "' to a space it sees";
    }
    diag << ": leave the placement of the " << (constant ? "constants" : "intermediates")
         << " to the compiler (it puts them where the kernels see them and reports the copies), or --place "
         << (constant ? "constants" : "intermediates") << "=" << seen.substr(1, seen.find('\'', 1) - 1);
    d.emitError(text);
    return failure();
  };
  for (CallTirOp d : live.dispatches) {
    for (Value input : d.getInputs()) {
      Value root = live.resolve(input);
      if (!constants.kernelVisible && root.getDefiningOp<arith::ConstantOp>())
        return refuse(d, root, /*constant=*/true, /*written=*/false);
      if (!arena.kernelVisible && live.bufferOf.count(root))
        return refuse(d, root, /*constant=*/false, /*written=*/false);
    }
    for (Value result : d.getResults())
      if (!arena.kernelVisible && live.bufferOf.count(result))
        return refuse(d, result, /*constant=*/false, /*written=*/true);
  }
  // Nothing a kernel touches was placed there: the space would still be part of the executable,
  // which a device that lacks it could not load.
  bool constantsThere = !constants.kernelVisible;
  const MemorySpaceDescription &unseen = constantsThere ? constants : arena;
  return emitError(graph.getLoc()) << "--place " << (constantsThere ? "constants" : "intermediates") << "="
                                   << unseen.name << ": " << processor << " does not see memory space '"
                                   << unseen.name << "', and no kernel of '" << graph.getSymName() << "' reads "
                                   << (constantsThere ? "a constant" : "an intermediate")
                                   << " there, so the placement holds nothing: leave it out";
}

//===- Machine.h - machine descriptions: memory spaces and processors -*- C++ -*-===//
//
// A machine file (JSON; presets in machines/: host, h200, edge) describes where a compiled
// model runs: its processors (a kind each: "host", "cuda"), its memory spaces (capacity in bytes,
// 0 for "whatever the machine has"; base alignment; the processors that see it; the space it lies
// within, if any) and the cost of moving bytes between two spaces. `hexir-compile --machine
// FILE|NAME` applies one to the target: the target's buffers go to the spaces its processor
// sees, with their capacities; --memory-budget then overrides a capacity.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_MACHINE_H
#define HEXIR_COMPILER_TARGET_MACHINE_H

#include "Target/TargetBackend.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::hexir {

struct MachineProcessor {
  std::string name;
  std::string kind;  // "host" (a CPU running host kernels) or "cuda"
  // Its arithmetic and memory-streaming rates: what recomputing a value costs (0: unknown).
  double flopsPerSecond = 0, bytesPerSecond = 0;
};

struct MachineMemorySpace {
  std::string name;
  uint64_t capacity = 0;  // bytes; 0: the machine's own (checked at run time)
  uint64_t alignment = 64;
  std::vector<std::string> visibleTo;  // processor names
  std::string within;                  // a larger space it is part of, or empty
};

struct MachineTransfer {
  std::string from, to;
  double bytesPerSecond = 0;
  double latencySeconds = 0;
};

struct MachineDescription {
  std::string name;
  std::vector<MachineProcessor> processors;
  std::vector<MachineMemorySpace> memorySpaces;  // fastest first
  std::vector<MachineTransfer> transfers;
};

// Parses and checks a machine file's text; `error` names what is wrong and where.
FailureOr<MachineDescription> parseMachine(llvm::StringRef json, llvm::StringRef source, std::string &error);

// A preset by name, or a file by path (anything with a '/' or ending in .json).
FailureOr<MachineDescription> loadMachine(llvm::StringRef nameOrPath, std::string &error);

// The names of the presets (machines/*.json, built in).
std::vector<std::string> machinePresetNames();

// The target's memory spaces become the machine's spaces that a processor of `processorKind`
// sees (in the machine's order), with their capacities: intermediates go to the first,
// constants to the last. Fails when the machine has no such processor or space.
LogicalResult applyMachine(TargetDescription &target, const MachineDescription &machine,
                           llvm::StringRef processorKind, std::string &error);

// The capacity of the smallest space within another that a processor of `processorKind` sees
// (a GPU's shared memory: per-kernel scratch); 0 when the machine has none.
uint64_t kernelScratchBytes(const MachineDescription &machine, llvm::StringRef processorKind);

// --place WHAT=SPACE (WHAT: "intermediates" or "constants"): those buffers go to the named space
// of the machine (of the target's own spaces without one) instead of where applyMachine put
// them. A space the target's processor does not see joins the target's spaces as one its
// kernels cannot address (kernelVisible false), with the machine's transfers to and from it:
// checkPlacement then refuses the first dispatch that would touch it, naming the transfer.
LogicalResult placeBuffers(TargetDescription &target, const MachineDescription *machine,
                           const std::map<std::string, std::string> &placements, std::string &error);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_MACHINE_H

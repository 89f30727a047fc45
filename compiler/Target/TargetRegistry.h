//===- TargetRegistry.h - targets by name ----------------------*- C++ -*-===//
//
// `hexir-compile --target NAME` picks a target here. The table of targets is in
// TargetRegistry.cpp: one line per target folder.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_TARGETREGISTRY_H
#define HEXIR_COMPILER_TARGET_TARGETREGISTRY_H

#include "Target/Machine.h"
#include "Target/TargetBackend.h"

#include <memory>

namespace mlir::hexir {

// What the command line says about the target.
struct TargetOptions {
  std::string name = "host";
  std::string cpu = "host";  // host: an LLVM CPU name, or "host" for this machine's CPU
  std::string linkerPath;    // host: the ld.lld that links kernel libraries
  std::string cudaArch = "sm_90";  // cuda: the GPU architecture (--cuda-arch)
  bool allowTf32 = false;          // cuda: f32 contractions on tensor cores in TF32 (--allow-tf32)
  // The machine file (--machine), when given: each target reads what concerns its processors
  // (cuda: the shared memory a block may use).
  const MachineDescription *machine = nullptr;
};

// The target named by `options.name`, or an error at `loc` listing the known targets (also
// for options the target refuses, such as an unknown CPU).
FailureOr<std::unique_ptr<TargetBackend>> createTargetBackend(const TargetOptions &options, Location loc);

// The names of the known targets, in the order --help lists them.
std::vector<std::string> registeredTargetNames();

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_TARGETREGISTRY_H

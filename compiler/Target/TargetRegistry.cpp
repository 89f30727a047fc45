//===- TargetRegistry.cpp - targets by name -------------------------------===//
#include "Target/TargetRegistry.h"

#include "Target/Cuda/CudaTarget.h"
#include "Target/Host/HostTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

struct RegisteredTarget {
  const char *name;
  FailureOr<std::unique_ptr<TargetBackend>> (*create)(const TargetOptions &, Location);
  bool tensorCores;  // whether --allow-tf32 means anything to it
};

// A new target adds its folder and one line here.
const RegisteredTarget kTargets[] = {
    {"host", createHostTarget, false},
    {"cuda", createCudaTarget, true},
    {"cuda-emulator", createCudaEmulatorTarget, true},
    {"cuda-emulator-reversed", createCudaEmulatorReversedTarget, true},
};

} // namespace

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createTargetBackend(const TargetOptions &options,
                                                                          Location loc) {
  for (const RegisteredTarget &t : kTargets)
    if (options.name == t.name) {
      if (options.allowTf32 && !t.tensorCores)
        return emitError(loc) << "--allow-tf32 selects TF32 tensor cores of the CUDA targets; target '" << t.name
                              << "' computes f32 in f32";
      return t.create(options, loc);
    }
  std::string known;
  llvm::raw_string_ostream os(known);
  llvm::interleaveComma(registeredTargetNames(), os);
  return emitError(loc) << "unknown target '" << options.name << "' (known targets: " << known << ")";
}

std::vector<std::string> mlir::hexir::registeredTargetNames() {
  std::vector<std::string> names;
  for (const RegisteredTarget &t : kTargets)
    names.push_back(t.name);
  return names;
}

//===- HostTarget.h - the host CPU as a target -----------------*- C++ -*-===//
//
// Kernels for the CPU the runtime runs on: vectorized for its ISA (AVX-512, AVX2, SSE), lowered
// to LLVM, linked into an ELF shared object the host HAL backend loads from memory. One memory
// space, host RAM, that the CPU and its kernels share.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_HOST_HOSTTARGET_H
#define HEXIR_COMPILER_TARGET_HOST_HOSTTARGET_H

#include "Target/TargetRegistry.h"

namespace mlir::hexir {

// Fails at `loc` when LLVM does not know `options.cpu`.
FailureOr<std::unique_ptr<TargetBackend>> createHostTarget(const TargetOptions &options, Location loc);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_HOST_HOSTTARGET_H

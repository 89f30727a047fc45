//===- CudaTarget.h - NVIDIA GPUs as a target ------------------*- C++ -*-===//
//
// Kernels for NVIDIA GPUs through the CUDA Driver API: PTX text from LLVM's NVPTX backend (no
// CUDA toolkit needed to compile), JIT-compiled by the driver at load. One memory space,
// "device" (global memory), that the host does not address: the runtime copies inputs in and
// outputs out.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_CUDATARGET_H
#define HEXIR_COMPILER_TARGET_CUDA_CUDATARGET_H

#include "Target/TargetRegistry.h"

namespace mlir::hexir {

// Fails at `loc` when LLVM's NVPTX backend does not know `options.cudaArch`.
FailureOr<std::unique_ptr<TargetBackend>> createCudaTarget(const TargetOptions &options, Location loc);
// The same kernels run on the host CPU, blocks as workgroups and threads as a loop: the CUDA
// code generator tested against PyTorch where there is no GPU (CudaEmulatorTarget.cpp).
FailureOr<std::unique_ptr<TargetBackend>> createCudaEmulatorTarget(const TargetOptions &options, Location loc);
// The emulator with blocks and threads run in reverse order: results that change reveal
// threads depending on each other's writes (races on a GPU).
FailureOr<std::unique_ptr<TargetBackend>> createCudaEmulatorReversedTarget(const TargetOptions &options,
                                                                          Location loc);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_CUDATARGET_H

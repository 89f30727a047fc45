//===- CudaKernels.h - the kernels of a graph as outlined CUDA kernels -*- C++ -*-===//
//
// The first half of CUDA code generation, shared by the `cuda` target (which continues to
// PTX) and the `cuda-emulator` target (which runs the same kernels on the host).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_CUDAKERNELS_H
#define HEXIR_COMPILER_TARGET_CUDA_CUDAKERNELS_H

#include "Target/Cuda/Passes.h"

#include "mlir/IR/OwningOpRef.h"
#include "serializer/executable_spec.h"

#include <vector>

namespace mlir::hexir {

struct OutlinedCudaKernels {
  // gpu.module @hexir_kernels: one gpu.func per launch.
  OwningOpRef<ModuleOp> module;
  // In the order a dispatch launches them: for each kernel function its entry, then
  // `<kernel>__1`, `<kernel>__2`, ... when it has several loop nests. Each with its arity, binding
  // sizes and launch shape (workgroups = blocks, workgroup_size = threads per block).
  std::vector<::hexir::serializer::KernelEntry> entries;
};

// Clones the kernel functions (func.func marked hexir.kernel) of `module` and runs the CUDA
// outlining pipeline on them.
FailureOr<OutlinedCudaKernels> outlineCudaKernels(ModuleOp module, const CudaPipelineOptions &options);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_CUDAKERNELS_H

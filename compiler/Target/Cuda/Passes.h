//===- Passes.h - passes and pipeline of the CUDA target --------*- C++ -*-===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_PASSES_H
#define HEXIR_COMPILER_TARGET_CUDA_PASSES_H

#include "Transforms/Passes.h"

namespace mlir::hexir {

// What OutlineGpuKernels records on each gpu.func: its launch shape (blocks, threads per block).
inline constexpr llvm::StringLiteral kCudaWorkgroupsAttrName = "hexir.workgroups";
inline constexpr llvm::StringLiteral kCudaWorkgroupSizeAttrName = "hexir.workgroup_size";
// The name of the gpu.module that holds every kernel.
inline constexpr llvm::StringLiteral kCudaKernelModuleName = "hexir_kernels";
// Elements each thread of an elementwise kernel takes along its innermost loop (TileToThreads
// sets it when the kernel qualifies; the outliner then reads and writes them as one vector).
inline constexpr llvm::StringLiteral kCudaVectorWidthAttrName = "hexir.cuda_vector_width";

// A kernel StageContractions tiled to blocks that stage through shared memory; its gpu.func
// keeps it, so the emulator runs the block's thread loops one after the other.
inline constexpr llvm::StringLiteral kCudaStagedAttrName = "hexir.cuda_staged";
// A loop of a staged kernel that the block's threads share: from the thread index to the
// iteration count in steps of the block's size; a barrier follows it.
inline constexpr llvm::StringLiteral kCudaThreadLoopAttrName = "hexir.cuda_thread_loop";
// The alignment every shared-memory buffer declares (`llvm.align` on a workgroup attribution):
// that of the widest access, 128 bits. LLVM assumes a large internal array is 16-byte aligned
// and vectorizes its accesses (ld.shared.v2) by that, while the PTX would declare only the
// element's alignment unless it is explicit (mobilenet_v2 at 224x224 read misaligned on an H200).
inline constexpr int64_t kCudaSharedAlignment = 16;

#define GEN_PASS_DECL
#include "Target/Cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Target/Cuda/Passes.h.inc"

struct CudaPipelineOptions {
  std::string chip = "sm_90";  // --cuda-arch
  int64_t blockSize = 256;
  uint64_t sharedMemoryBytes = 0;  // per block, from the machine file; 0: unknown
  bool allowTf32 = false;           // --allow-tf32: f32 contractions on tensor cores (sm_80+)
};
// Kernel functions on tensors -> gpu.funcs in gpu.module @hexir_kernels, on memrefs, one per
// loop nest (the first half of the CUDA kernel pipeline; the launch shapes are read here).
void buildCudaOutliningPipeline(OpPassManager &pm, const CudaPipelineOptions &options = {});
// gpu.module @hexir_kernels -> gpu.binary holding PTX (NVVM, then LLVM's NVPTX backend).
void buildCudaSerializationPipeline(OpPassManager &pm, const CudaPipelineOptions &options = {});
// Registers the CUDA passes and the named pipeline `hexir-cuda-lower-kernels` for hexir-opt.
void registerCudaPassesAndPipelines();

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_PASSES_H

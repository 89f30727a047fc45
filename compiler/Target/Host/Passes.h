//===- Passes.h - passes and pipeline of the host target -------*- C++ -*-===//
#ifndef HEXIR_COMPILER_TARGET_HOST_PASSES_H
#define HEXIR_COMPILER_TARGET_HOST_PASSES_H

#include "Transforms/Passes.h"

namespace mlir::hexir {

// The workgroup count DistributeWorkgroups records on each kernel.
inline constexpr llvm::StringLiteral kWorkgroupsAttrName = "hexir.workgroups";

#define GEN_PASS_DECL
#include "Target/Host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Target/Host/Passes.h.inc"

// What the host kernel pipeline needs to know of the target CPU.
struct KernelPipelineOptions {
  int64_t vectorBits = 256;  // vector register width: 128 (SSE), 256 (AVX2), 512 (AVX-512)
  bool fma = true;           // fused multiply-add instructions
  bool rounding = true;      // SSE4.1 roundss/roundps (floor, ceil)
  // int8 dot products (vpdpbusd) on vectors of this many bits: 512 with AVX512-VNNI, 256 with
  // AVX-VNNI; 0: none (int8 products are widened to int32 and multiplied).
  int64_t dotBits = 0;
  // Without them, int8 products of pairs (vpmaddwd on bytes widened to int16, exact) on vectors
  // of this many bits: 128 with SSE2, 256 with AVX2, 512 with AVX512BW; 0: none.
  int64_t pairBits = 0;
  // bf16 dot products (vdpbf16ps) and conversions on vectors of this many bits: 512 with
  // AVX512-BF16; 0: none (conversions go through integers, bf16 contractions are widened).
  int64_t bf16DotBits = 0;
  // A kernel's stack buffers at most (hexir-check-kernel-stack): 64 KiB, what a worker thread's
  // stack takes without thought; the CUDA emulator allows more (a block's shared memory and every
  // thread's private tile are its stack).
  int64_t maxStackBytes = 65536;
};
// Kernel functions on tensors -> LLVM dialect with the bare-pointer ABI
// `void kernel(ptr in0, ..., ptr out0, ..., i32 wg_begin, i32 wg_end)`.
void buildHostKernelPipeline(OpPassManager &pm, const KernelPipelineOptions &options = {});
// Its second half: bufferized kernels (loops, vectors, a hexir.workgroup_range or none) -> the
// LLVM dialect with the workgroup range as two trailing i32 arguments.
void buildHostLoopsToLLVMPipeline(OpPassManager &pm, const KernelPipelineOptions &options = {});
// Registers the host passes and the named pipeline `hexir-lower-kernels-to-llvm` for hexir-opt.
void registerHostPassesAndPipelines();

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_HOST_PASSES_H

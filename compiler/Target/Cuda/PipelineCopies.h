//===- PipelineCopies.h - a staged kernel's next tiles copied during this step -*- C++ -*-===//
//
// A staged kernel's step copies its input tiles from global to shared memory, waits at a
// barrier, then computes on them: the loads' latency is paid every step. On sm_80 and newer
// the copies are `cp.async` and double-buffered instead: each shared tile gets two slots; the
// tiles of step 0 are requested before the steps' loop; each step requests the next step's
// tiles into the other slot, waits only for its own (`cp.async.wait_group 1`), and computes
// while the next ones arrive. The barrier at the end of a step keeps the next step's requests
// from overwriting the slot it read.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_PIPELINECOPIES_H
#define HEXIR_COMPILER_TARGET_CUDA_PIPELINECOPIES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// Marks a thread loop whose copies into shared memory are to be asynchronous.
inline constexpr llvm::StringLiteral kCudaAsyncCopyAttrName = "hexir.cuda_async_copy";

// Double-buffers the steps' loops of staged kernel `gfn` (after its thread loops and barriers
// are placed, before they are lowered) whose body is: views, thread loops that each copy a
// view of a binding into a shared buffer only this loop uses, a barrier, the rest ending in a
// barrier, where the kernel's shared memory with a second slot of each tile stays within
// `sharedLimit` bytes. Their copy loops are marked kCudaAsyncCopyAttrName. Returns how many.
int64_t pipelineCopies(RewriterBase &rewriter, gpu::GPUFuncOp gfn, int64_t sharedLimit);

// In the marked thread loops (lowered: loads and stores), each copy of a value loaded from
// global memory and stored to shared memory becomes `nvgpu.device_async_copy`.
LogicalResult makeCopiesAsync(RewriterBase &rewriter, gpu::GPUFuncOp gfn);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_PIPELINECOPIES_H

//===- ElideBarriers.h - barriers a staged kernel does not need -*- C++ -*-===//
//
// The outliner puts a barrier after every thread loop of a staged kernel. One is needed only
// where a later loop may touch what an earlier one did from another thread: a loop reading a
// shared buffer another wrote, or writing one another read or wrote. Two tile copies in a row
// (each to its own buffer), an initializer writing only a thread's private tile, and the last
// loop of the kernel need none.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_ELIDEBARRIERS_H
#define HEXIR_COMPILER_TARGET_CUDA_ELIDEBARRIERS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::hexir {

// Erases the barriers after thread loops (kCudaThreadLoopAttrName) of `gfn` that order no
// conflicting accesses: between the loops since the last barrier kept and the next thread loop
// of the same block, no buffer (each shared buffer, and global memory as one: bindings may
// alias) is written by one side and read or written by the other. Private tiles are each
// thread's own. A barrier before the end of a loop body (the next iteration's first loop) is
// kept. Returns how many were erased.
int64_t elideBarriers(gpu::GPUFuncOp gfn);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_ELIDEBARRIERS_H

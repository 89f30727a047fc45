//===- ThreadPrivate.h - a block's shared tiles kept per thread -*- C++ -*-===//
//
// A staged kernel's accumulator is a shared buffer of the block's output tile of which each
// thread reads and writes only its own sub-tile, the same one in every thread loop (the
// initializer, each step's accumulation, the epilogue: StageContractions tiles them alike).
// Such a buffer needs no shared memory: each thread keeps its sub-tile in a private array of
// the sub-tile's shape, which LLVM promotes to registers once the loops over it unroll (every
// index then a constant). A buffer any loop reads differently stays in shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_CUDA_THREADPRIVATE_H
#define HEXIR_COMPILER_TARGET_CUDA_THREADPRIVATE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {

// Marks the memref.alloca, in a staged gpu.func's entry block, of a thread's own sub-tile: the
// GPU keeps one per thread (registers); the emulator, which runs a block's threads loop by
// loop, saves and restores each thread's copy around every thread-loop iteration.
inline constexpr llvm::StringLiteral kCudaThreadPrivateAttrName = "hexir.cuda_thread_private";

// Replaces each workgroup `memref.alloc` in `blocks` that qualifies (every use a view, inside
// a thread forall of at most `threads` iterations, of the forall's own tile: offsets its
// induction variables in steps of the view's sizes, every forall alike) by a private alloca
// of the tile's shape at the start of `gfn`. Returns how many.
int64_t privatizeThreadTiles(RewriterBase &rewriter, gpu::GPUFuncOp gfn, scf::ForallOp blocks, int64_t threads);

// Whether `forall` is a staged block's thread forall (mapped to #gpu.thread).
bool isThreadForall(scf::ForallOp forall);

// Whether `op` reads or writes a private tile.
bool touchesThreadPrivate(linalg::LinalgOp op);

// `op` (touching a private tile) as loops whose indices into the tile are constants: the loops
// the tile's indexing uses innermost and fully unrolled, the others (a contraction's reduction)
// around them, in their order, so each output accumulates in the same order as before. An
// accumulation becomes the register-tiled outer product: per reduction step, a few loads and
// one fma per element of the tile.
LogicalResult lowerOverThreadPrivate(RewriterBase &rewriter, linalg::LinalgOp op);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_CUDA_THREADPRIVATE_H

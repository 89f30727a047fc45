//===- Passes.td - passes of the host kernel pipeline ---------------------===//
//
// Passes on kernel functions that only the host target runs (its kernel pipeline is in
// HostPipeline.cpp): vector tiles on tensors, register-resident accumulators, workgroups for
// the host thread pool, inline math, and the stack check of the host kernel ABI.

#ifndef HEXIR_HOST_PASSES_TD
#define HEXIR_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileAndVectorize : Pass<"hexir-tile-and-vectorize", "mlir::ModuleOp"> {
  let summary = "Tiles a kernel's contraction or convolution for workgroups, caches and registers, and vectorizes it";
  let description = [{
    Runs on kernels on tensors, before bufferization. A kernel whose root is a contraction
    (matmul-like linalg op with one reduction loop), a channels-last convolution, depthwise
    convolution or pooling, or an elementwise op (vectorized along its innermost dimension)
    is tiled three times: workgroups (one loop over chunks of an output
    dimension, bounded by `hexir.workgroup_range`, recorded as `hexir.workgroups`), caches
    (contractions: 64 x 256 x 256 blocks) and registers (up to 8 rows x 2 vectors of
    accumulators, reduction step 1), then vectorized. Its initializers (a fill, or an explicit
    copy of a read-only bias argument) are split into the same workgroups. Tile sizes divide
    the shapes exactly, so every tile is static. Other kernels are left unchanged.

    Before:
    ```mlir
    %0 = linalg.fill ins(%zero : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
    %1 = linalg.matmul ins(%a, %b : ...) outs(%0 : tensor<128x768xf32>) -> tensor<128x768xf32>
    ```
    After: `%b, %e = hexir.workgroup_range`, `scf.for` over column chunks [b * 32, e * 32),
    cache loops, register loops, and `vector.contract` on `vector<8x1xf32>` x
    `vector<1x32xf32>` into `vector<8x32xf32>`.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits (128, 256 or 512)">,
    Option<"maxWorkgroups", "max-workgroups", "int64_t", /*default=*/"64",
           "Most workgroups per kernel">,
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Loop iterations per workgroup below which a kernel is not split further">,
  ];
  let dependentDialects = ["mlir::hexir::HexirDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::affine::AffineDialect", "mlir::tensor::TensorDialect",
                           "mlir::vector::VectorDialect", "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect", "mlir::bufferization::BufferizationDialect"];
}

def LowerVectorTiles : Pass<"hexir-lower-vector-tiles", "mlir::ModuleOp"> {
  let summary = "Keeps register tiles in registers and lowers contractions to FMA outer products";
  let description = [{
    Runs after bufferization on kernels vectorized by hexir-tile-and-vectorize. Folds subviews
    into vector transfers and drops leading unit vector dimensions, hoists the accumulator's
    transfer_read/transfer_write out of the reduction loops (so it lives in registers), then
    lowers vector.contract to outer products and vector.fma, and transfers to rank 1. With
    dot-bits, int8 contractions over groups of four become VNNI dot products first, with
    pair-bits those over pairs become vpmaddwd on the bytes widened to int16, and with
    bf16-dot-bits bf16 contractions over pairs become vdpbf16ps (DotProducts.h).
  }];
  let options = [
    Option<"dotBits", "dot-bits", "int64_t", /*default=*/"0",
           "int8 dot products (vpdpbusd) on vectors of this many bits (512, 256; 0: none)">,
    Option<"pairBits", "pair-bits", "int64_t", /*default=*/"0",
           "int8 products of pairs (vpmaddwd) on vectors of this many bits (512, 256, 128; 0: none)">,
    Option<"bf16DotBits", "bf16-dot-bits", "int64_t", /*default=*/"0",
           "bf16 dot products (vdpbf16ps) on vectors of this many bits (512; 0: none)">,
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect"];
}

def PrefetchStreams : Pass<"hexir-prefetch-streams", "mlir::ModuleOp"> {
  let summary = "Prefetches the next cache block of large operands read by register-tile loops";
  let description = [{
    Runs after hexir-lower-vector-tiles. A register tile's innermost loop (constant bounds,
    step 1, `span` iterations: one cache block) that loads vectors from a large kernel operand
    (at least `min-bytes`: weights that stream from memory on every run) at an index
    `base + iv` also prefetches, into L2, the same element of the next block, `base + span +
    iv` (the base clamped so it stays inside the operand). While the current block is reused
    from the caches, the next one arrives from memory: a matmul's next 256 reduction steps of
    its weight panels, a convolution's next 64 input channels of its filter. A loop over a
    whole dimension (a reduction kept in one block) prefetches the same element at the next
    index of the dimension outside it (the next panel), clamped likewise. A loop that packs
    a block of a run-time B into a stack buffer (panels packed in the matmul's kernel)
    prefetches each row of B it loads at the next group of panels, where the next block it
    packs starts.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"1048576",
           "Prefetch only operands of at least this many bytes">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::affine::AffineDialect", "mlir::arith::ArithDialect"];
}

def DistributeWorkgroups : Pass<"hexir-distribute-workgroups", "mlir::ModuleOp"> {
  let summary = "Splits each bufferized kernel into independent workgroups along one output dimension";
  let description = [{
    Runs on kernels after bufferization (memrefs, results as out-parameters). Every kernel
    gets two trailing i32 arguments, the workgroup range [begin, end) its caller asks for, and
    a `hexir.workgroups` attribute with its workgroup count.

    A kernel is split when every op touching an output buffer is a linalg op writing the
    whole buffer, and some output dimension p of extent >= 2 is, in every such op, a plain
    parallel loop: then each op is tiled along that loop with a tile of `chunk` rows, and the
    tile loop runs over rows [begin * chunk, min(end * chunk, extent)). Workgroups touch
    disjoint rows of every output, so they are independent and the host thread pool may run
    them concurrently in any order. Small kernels (below `min-work` loop iterations) and
    kernels of any other shape stay one workgroup and ignore the range.

    A kernel already split on tensors by hexir-tile-and-vectorize keeps its split: its
    `hexir.workgroup_range` ops become the two new arguments.
  }];
  let options = [
    Option<"maxWorkgroups", "max-workgroups", "int64_t", /*default=*/"64",
           "Most workgroups per kernel">,
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Loop iterations per workgroup below which a kernel is not split further">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect"];
}

def ExpandCopies : Pass<"hexir-expand-copies", "mlir::ModuleOp"> {
  let summary = "Rewrites memref.copy into linalg.copy";
  let description = [{
    memref.copy between non-contiguous memrefs lowers to a call of the `memrefCopy` runtime
    function, which a kernel library does not have. As linalg.copy it becomes plain loops.
    A copy of a whole kernel input into a whole output of the same type (the start of an
    update in place) runs only when their buffers differ: over one buffer it is a no-op.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def ApproximateMath : Pass<"hexir-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces transcendental math ops with inline polynomial approximations";
  let description = [{
    Kernels call no library (the host kernel ABI forbids libm), so math.exp, math.tanh,
    math.erf, math.log and friends become arithmetic: MLIR's polynomial approximations, accurate
    to a few ulp in f32. On a target without fused multiply-add (x86-64, x86-64-v2), the
    polynomials' math.fma become a multiply and an add: LLVM would otherwise call libm's
    fmaf. Likewise floor and ceil without SSE4.1 (x86-64 baseline), instead of floorf/ceilf,
    and f32 <-> bf16 conversions without AVX512-BF16 (--precision bf16 on such a target),
    instead of __truncsfbf2.
  }];
  let options = [
    Option<"fma", "fma", "bool", /*default=*/"true",
           "The target has fused multiply-add instructions">,
    Option<"rounding", "rounding", "bool", /*default=*/"true",
           "The target has SSE4.1 rounding instructions (else floor and ceil go through integers)">,
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "The target converts f32 to bf16 itself (AVX512-BF16; else the conversions go through integers)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def CheckKernelStack : Pass<"hexir-check-kernel-stack", "mlir::ModuleOp"> {
  let summary = "Checks that kernels only use static, bounded stack buffers";
  let description = [{
    Runs after vector-to-scf, on memrefs. Kernels never allocate on the heap (memref.alloc is
    an error); every memref.alloca has a static size and, inside a loop, is released every
    iteration (an enclosing memref.alloca_scope inside the loop): an alloca that is not
    allocates again on each iteration and overflows the stack on a large tensor. The stack
    buffers of a kernel add up to at most `max-stack-bytes`. A violation is a compiler bug and
    fails compilation instead of crashing at run time. Records the total as
    `hexir.stack_bytes` on each kernel.
  }];
  let options = [
    Option<"maxStackBytes", "max-stack-bytes", "int64_t", /*default=*/"65536",
           "Most bytes of stack buffers per kernel">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // HEXIR_HOST_PASSES_TD

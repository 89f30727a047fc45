//===- Passes.td - passes of the CUDA kernel pipeline ---------------------===//
//
// Passes on kernel functions that only the CUDA target runs (its kernel pipeline is in
// CudaPipeline.cpp): one GPU thread per output element (or row) on tensors, then each loop
// nest of a bufferized kernel outlined as a `gpu.func` the runtime launches.

#ifndef HEXIR_CUDA_PASSES_TD
#define HEXIR_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def StageContractions : Pass<"hexir-cuda-stage-contractions", "mlir::ModuleOp"> {
  let summary = "Tiles a contraction kernel to thread blocks that stage their input tiles through shared memory";
  let description = [{
    Runs on kernels on tensors, before TileToThreads. A kernel whose one result is a matmul,
    batched matmul or convolution over bindings, with an elementwise initializer and epilogue,
    that can reuse its input tiles (at least 64 outputs per block, each input element read by
    at least 4 of them, at least 16 products per output; or, for a convolution no parallel loop
    reuses, such as a depthwise one, each input element read 4 times by its window's overlap,
    at least 9 products per output) is tiled to thread blocks: an
    `scf.forall` mapped to `#gpu.block<linear_dim_*>`. The block tile is the combination of
    divisors (at most 64) of the parallel loops with at most a block's share of the outputs
    (the outputs over 128 multiprocessors, between 256 and 4096) that reuses its least reused
    input most, then has the most outputs, then the longest step (a divisor from 4 to 16 of the
    last reduction loop, or all of it up to 64 where none divides it), within 40 KiB of shared memory (or `capacity`, the machine file's
    shared memory space, when that is less). Inside a block the step loop is an `scf.for`;
    every step copies its input tiles into `bufferization.alloc_tensor`s in workgroup memory,
    and the accumulator lives in workgroup memory from the initializer to the epilogue. Every
    op of a block (initializer, copies, the step's accumulation, the epilogue with its
    producers) is tiled to an `scf.forall` mapped to `#gpu.thread<linear_dim_*>`: one element
    an iteration, a sub-tile of the accumulator for the accumulation. Tiles divide their loops
    (or, along an extent nothing from 8 to 64 divides, the last block is shifted back to end at
    it), so every shape is static. The kernel is marked `hexir.cuda_staged`; others, and any whose
    staging upstream tiling refuses, are left to TileToThreads.

    Before: `%m = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>)`.
    After: `scf.forall (%i, %j) = (0, 0) to (128, 96) step (16, 16)` (48 blocks), an `scf.for`
    over K in steps of 16 with `linalg.copy` of the 16x16 input tiles into workgroup tensors,
    each in its thread forall, and the accumulation in a thread forall of one output each.
  }];
  let options = [
    Option<"capacity", "capacity", "uint64_t", /*default=*/"0",
           "Bytes of shared memory per block the machine has (0: unknown); tiles fit the lesser of it and 40 KiB">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::linalg::LinalgDialect", "mlir::gpu::GPUDialect",
                           "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def SplitReductions : Pass<"hexir-cuda-split-reductions", "mlir::ModuleOp"> {
  let summary = "Shares each output of a reduction kernel with too few outputs among the threads of a block";
  let description = [{
    Runs on kernels on tensors, after StageContractions and before TileToThreads. A kernel of
    one reduction (an associative, commutative combiner: a sum, a product, a max or min, a
    bitwise op) with an elementwise initializer and epilogue, whose outputs are fewer than
    65,536 and each reduces at least 128 values over inputs indexed by loops alone (a pool, a
    mean, a matrix times a vector), is split: S threads share each output (S a divisor, at
    least 4, of the longest reduction loop d, as many as fill 65,536 threads, at most 256 and
    at most d / 4). The reduction becomes a partial op over [outputs][S], its inputs expanded
    along d as [d / S][S] so thread s reduces steps s, s + S, ... from the combiner's neutral
    element, and a final op combining each output's S partials with its initial value. The
    result is tiled to blocks of P outputs (P * S <= 256); in a block the partials live in
    shared memory, one thread loop fills and reduces them (S threads of an output adjacent
    where d is an input's innermost dimension, else the outputs adjacent), and after its
    barrier one thread per output combines them and runs the epilogue. The kernel is marked
    `hexir.cuda_staged`, as StageContractions marks its own.

    Before: `linalg.generic` summing `tensor<1x56x56x16xf32>` over (h, w) into `tensor<1x16xf32>`.
    After: 4 blocks of 4 channels x 56 threads; thread s of channel c sums rows s of each
    expanded `tensor<1x1x56x56x16xf32>` into a `tensor<56x1x4xf32>` of partials in shared
    memory; one thread per channel adds its 56 partials to 0.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::linalg::LinalgDialect", "mlir::gpu::GPUDialect",
                           "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def TileToThreads : Pass<"hexir-cuda-tile-to-threads", "mlir::ModuleOp"> {
  let summary = "Tiles each kernel's result to one GPU thread per element and fuses its producers";
  let description = [{
    Runs on kernels on tensors, before bufferization. The op computing a kernel's result is
    tiled with `scf.forall` to one iteration per element of its parallel loops (one per row
    where the kernel reduces along rows and broadcasts the result back, as a softmax or a
    layer normalization does), and every producer inside the kernel (an initializer, the
    matmul or convolution of an epilogue, the reductions of a row kernel) is fused into that
    iteration: the kernel becomes one loop nest, with no intermediate tensor. Reductions run
    sequentially inside an iteration. A pad computing the result becomes an elementwise op
    that reads its source with a clamped index and selects the padding value outside it.

    Before: `%1 = linalg.matmul ... outs(%fill)`, `%2 = linalg.generic {max(%1, 0)}`.
    After: `scf.forall (%i, %j) in (128, 768)` computing one element of the fill, the matmul
    (a reduction over K) and the ReLU.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def OutlineGpuKernels : Pass<"hexir-cuda-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Outlines every loop nest of a bufferized kernel as a gpu.func launched with one thread per iteration";
  let description = [{
    Runs on bufferized kernels (bare memref arguments, results as out-parameters). Each
    top-level loop nest of a kernel (an `scf.forall`, or a linalg op or copy left outside one)
    becomes a `gpu.func` in `gpu.module @hexir_kernels` taking all of the kernel's bindings:
    the first keeps the kernel's name, the next ones are `<kernel>__1`, `<kernel>__2`, ... and
    the runtime launches them in order. The nest's iterations are linearized: iteration
    `blockIdx.x * blockDim.x + threadIdx.x`, guarded against the last block's surplus threads;
    `hexir.workgroups` and `hexir.workgroup_size` record the launch shape. Loops left inside an
    iteration run sequentially, temporaries of an iteration live in registers or local memory
    (`memref.alloca`), and transcendental math becomes polynomials (the PTX calls no library).
    A kernel whose nests pass a temporary buffer to each other (one thread tiling could not
    fuse) runs whole on a single thread with its temporaries in local memory (at most 256 KiB;
    more is refused). A staged kernel's block is one CUDA block: its thread foralls become
    loops from the thread index, with a barrier where the next loop needs one; a shared tile
    each thread only touches its own part of (the accumulator) becomes registers; on sm_80 and
    newer its tile copies are double-buffered cp.async where two slots fit `capacity`. With
    `allow-tf32` (sm_80 and newer), a staged contraction of f32 that is a matrix product
    (convolutions too) accumulates on tensor cores: `hexir.warp_mma` per warp and 16x8 tile.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The CUDA architecture the gpu.module targets">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"capacity", "capacity", "uint64_t", /*default=*/"0",
           "Shared memory of a block in bytes (0: the 48 KiB a block may declare statically): a "
           "staged kernel's tiles are double-buffered only where both slots fit">,
    Option<"allowTf32", "allow-tf32", "bool", /*default=*/"false",
           "On sm_80 and newer, a staged f32 contraction multiplies on tensor cores in TF32 "
           "(hexir.warp_mma; TensorCoreTiles.h)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect", "mlir::nvgpu::NVGPUDialect",
                           "mlir::scf::SCFDialect", "mlir::linalg::LinalgDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect", "mlir::vector::VectorDialect"];
}

def LowerWarpMma : Pass<"hexir-cuda-lower-warp-mma"> {
  let summary = "Lowers hexir.warp_mma to fragment loads, TF32 conversions and nvgpu.mma.sync";
  let description = [{
    Runs on the gpu.module before the NVGPU and GPU to NVVM conversions. Each `hexir.warp_mma`
    becomes the lane's fragment of A (4 elements) and B (2) in the layout of
    `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, each converted with
    `cvt.rna.tf32.f32`, and one `nvgpu.mma.sync` with `tf32Enabled`. (The CUDA emulator lowers
    the same op to its dot products instead: WarpMma.h.)
  }];
  let dependentDialects = ["mlir::NVVM::NVVMDialect", "mlir::nvgpu::NVGPUDialect", "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect"];
}

def CheckSharedMemory : Pass<"hexir-cuda-check-shared-memory", "mlir::ModuleOp"> {
  let summary = "Checks each CUDA kernel's shared memory against what one block may have";
  let description = [{
    Per-kernel scratch against its memory space: every `gpu.func` of `gpu.module
    @hexir_kernels` adds up the shared memory it declares (workgroup attributions, and allocas
    and globals in the workgroup address space), records it as `hexir.shared_bytes`, and fails
    when that is over `capacity` (the machine file's space within the device memory, such as
    the H200's 228 KiB) or over the 48 KiB a block may declare statically, whichever is less.
    The error names the kernel, its bytes and the limit.
  }];
  let options = [
    Option<"capacity", "capacity", "uint64_t", /*default=*/"0",
           "Bytes of shared memory per block the machine has (0: unknown, only the static limit)">,
  ];
}

def EmulateGpuKernels : Pass<"hexir-cuda-emulate-on-host", "mlir::ModuleOp"> {
  let summary = "Turns the outlined CUDA kernels into host kernels that run their blocks and threads as loops";
  let description = [{
    Testing without a GPU (the `cuda-emulator` target). Each `gpu.func` of
    `gpu.module @hexir_kernels` becomes a `func.func` of the host kernel ABI: its workgroups
    are the CUDA blocks (`hexir.workgroup_range`, so the host thread pool runs blocks in
    parallel as a GPU would), and each block runs its threads one after the other, with
    `gpu.block_id x` and `gpu.thread_id x` replaced by the loop indices. A staged kernel's
    shared memory becomes one buffer per block and its barriers the ends of its thread loops:
    each thread loop runs every thread before the next begins, and nothing a thread keeps
    crosses a barrier outside shared memory, so running threads in sequence computes what the
    GPU computes: the end-to-end tests check the CUDA target's tiling, fusion, launch shapes and
    multi-launch kernels against PyTorch on any machine. `reverse` runs the blocks of each
    workgroup range and the threads of each block in reverse order (the `cuda-emulator-reversed`
    target): a kernel whose threads depend on each other's writes (a race on a GPU) then gives
    other results than in forward order.
  }];
  let options = [
    Option<"reverse", "reverse", "bool", /*default=*/"false",
           "Run blocks and threads in reverse order">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::scf::SCFDialect", "mlir::hexir::HexirDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

#endif // HEXIR_CUDA_PASSES_TD

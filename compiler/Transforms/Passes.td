//===- Passes.td - Hexir graph and kernel passes --------------------------===//

#ifndef HEXIR_PASSES_TD
#define HEXIR_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyInput : Pass<"hexir-verify-input", "mlir::ModuleOp"> {
  let summary = "Checks that the entry function is a graph Hexir can compile";
  let description = [{
    Runs first, on the user's graph. The entry function must take and return statically shaped
    ranked f32 tensors, and contain only supported operations (the TOSA subset listed in
    docs/architecture.md, linalg ops on tensors, tensor.empty/pad/expand_shape/collapse_shape/
    extract_slice/insert_slice/concat and arith.constant); every value must have a static
    shape. Anything else is an error at the offending location saying what is wrong and what
    to do. Other functions are errors too: Hexir compiles one graph function.

    Before: `func.func @main(%x: tensor<?x4xf32>)` — after: error
    "argument 0 of @main has type 'tensor<?x4xf32>' with a dynamic dimension; Hexir compiles
    static shapes only: give every dimension a size".
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "Name of the function to compile">,
  ];
}

def ConvertToChannelsLast : Pass<"hexir-convert-to-channels-last", "mlir::ModuleOp"> {
  let summary = "Computes convolutions and poolings channels-last and moves the layout changes to the graph's edges";
  let description = [{
    Runs on the graph before dispatch formation. Each NCHW convolution, depthwise convolution
    and pooling becomes its NHWC form between two linalg.transpose ops (constant filters are
    transposed at compile time; a TOSA NHWC/FHWC convolution gets an HWCF filter). Then the
    transposes travel until they cancel: a generic op reads through a transpose by permuting
    its indexing map; an elementwise op whose result is transposed, or whose full-rank inputs
    are all read through one permutation, is recomputed in that layout; transposes move above
    pads, fills, empty tensors and constants and out of concatenations; two transposes compose.

    Before: `%y = linalg.conv_2d_nchw_fchw ins(%x, %w) outs(%b)` then `%r = relu(%y)`, then
    the next convolution. After: `linalg.conv_2d_nhwc_hwcf` and `relu` on NHWC tensors; one
    transpose of the graph's input image, one back before the classifier.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def FuseElementwise : Pass<"hexir-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses each elementwise op into the one generic op that reads it";
  let description = [{
    Runs on the graph before dispatch formation: an elementwise linalg.generic whose result
    has one reader, a linalg.generic that is not a contraction, becomes part of that reader
    (upstream linalg elementwise fusion), so a chain of elementwise ops is one kernel and no
    intermediate tensor is written.

    Before: `%e = exp(%x)`, `%s = reduce_sum(%e)` as two generic ops. After: one generic op
    computing `exp` inside the reduction.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def PackConvFilters : Pass<"hexir-pack-conv-filters", "mlir::ModuleOp"> {
  let summary = "Stores constant convolution filters as contiguous panels of the kernel's channel tile";
  let description = [{
    Runs on the graph before dispatch formation. A linalg.conv_2d_nhwc_hwcf with a constant
    f32 filter W[kh][kw][c][f] gets it packed at compile time into panels
    P[f / nr][kh][kw][c][nr] (nr = 32, 16 or 8, the first that divides F), so the kernel's
    register tile reads contiguous memory at every tap instead of rows F floats apart. The
    convolution becomes a linalg.generic over (n, oh, ow, p, fi, kh, kw, c) into its result
    viewed as [N, OH, OW, F/nr, nr]; a 1x1 convolution with stride 1 becomes a contraction over
    (n, oh, ow, p, fi, c) (a packed matmul). Its zero fill or bias broadcast is rebuilt in the
    packed shape. A layer of at least 128 channels that only 8 divides gets 16-wide panels, the
    last padded with zero channels (and its bias with zeros), and the real channels are an
    extract_slice of the result.

    Before: `O = conv_2d_nhwc_hwcf(I, W)`. After: `O5 = generic(I, P)`, `O =
    collapse_shape(O5)`, P a constant.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def PackMatmulWeights : Pass<"hexir-pack-matmul-weights", "mlir::ModuleOp"> {
  let summary = "Stores the constant weights of matmuls as contiguous panels of the kernel's column tile";
  let description = [{
    Runs on the graph before dispatch formation. A contraction (linalg.generic) reading a
    constant f32 matrix B indexed by (k, n) or (n, k) gets B packed at compile time into
    panels P[n / nr][k][nr] (nr = 32, 16 or 8, the first that divides N), so the kernel's
    register tile reads nr consecutive floats at each reduction step instead of rows N floats
    apart (or, with transB, columns). The contraction runs over (..., m, no, ni, k) into its
    result viewed as [..., M, N/nr, nr]; its zero fill or bias broadcast is rebuilt in that
    shape.

    Before: `C[m, n] += A[m, k] * B[n, k]` (a Gemm with transB). After: `C3[m, no, ni] +=
    A[m, k] * P[no, k, ni]`, `C = collapse_shape(C3)`, P a constant.

    A run-time B read with k innermost (attention's Q x K^T) is transposed first by an
    elementwise op (K x N copies against M x N x K multiply-adds), so its columns are
    contiguous too.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def SinkPackedViews : Pass<"hexir-sink-packed-views", "mlir::ModuleOp"> {
  let summary = "Moves the view of a packed matmul or convolution result below its elementwise reader";
  let description = [{
    Runs on the graph after packing. `collapse_shape(C3)` read by an elementwise generic op
    (and by nothing else), where C3 is a packed contraction's or convolution's result, becomes
    the generic op over C3's shape (its other operands expanded the same way) followed by the
    collapse_shape: the elementwise op reads the contraction's result directly, so dispatch
    formation can fuse it as the contraction's epilogue.

    Before: `C = collapse_shape(C3)`, `Y = relu(C + R)`. After: `Y3 = relu(C3 +
    expand_shape(R))`, `Y = collapse_shape(Y3)`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def OutlineDispatches : Pass<"hexir-outline-dispatches", "mlir::ModuleOp"> {
  let summary = "Outlines every tensor computation into a kernel called by hexir.call_tir";
  let description = [{
    Dispatch formation. Every linalg op on tensors, and every tensor op that computes
    (pad, extract_slice, insert_slice, concat), becomes a kernel function marked
    `hexir.kernel` taking its tensor operands and returning its results, and is replaced in the
    graph by `hexir.call_tir`. Cheap producers are cloned into the kernel instead of becoming
    operands: tensor.empty, scalar constants and linalg.fill of a scalar constant into
    tensor.empty (so an accumulator's zero-init is part of its matmul kernel). Tensor constants
    stay in the graph (they become the constant pool) and reshapes stay as views.

    Before:
    ```mlir
    %0 = tensor.empty() : tensor<4x16xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = linalg.matmul ins(%x, %w : ...) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
    After:
    ```mlir
    %2 = hexir.call_tir @main_dispatch_0_matmul(%x, %w) : (...) -> tensor<4x16xf32>
    func.func @main_dispatch_0_matmul(...) attributes {hexir.kernel} { fill; matmul }
    ```
    Kernel arguments are marked `bufferization.writable = false`: a kernel never writes its
    inputs, which the runtime relies on to bind caller buffers without copies.

    A tensor.pad whose source is produced by a compute op read by nothing else (an activation
    before a convolution) takes that op into its kernel, which writes the result straight into
    the interior of the padded tensor (hexir-tile-and-vectorize): the unpadded tensor and the
    copy disappear. `fuse-producers=false` (hexir-compile --no-fusion) keeps them apart.
  }];
  let options = [
    Option<"fuseProducers", "fuse-producers", "bool", /*default=*/"true",
           "Compute the producer of a pad inside the pad's kernel">,
  ];
  let dependentDialects = ["mlir::hexir::HexirDialect", "mlir::func::FuncDialect",
                           "mlir::bufferization::BufferizationDialect", "mlir::tensor::TensorDialect"];
}

def ApproximateMath : Pass<"hexir-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces transcendental math ops with inline polynomial approximations";
  let description = [{
    Kernels call no library (the host kernel ABI forbids libm), so math.exp, math.tanh,
    math.erf, math.log and friends become arithmetic: MLIR's polynomial approximations, accurate
    to a few ulp in f32. On a target without fused multiply-add (x86-64, x86-64-v2), the
    polynomials' math.fma become a multiply and an add: LLVM would otherwise call libm's
    fmaf. Likewise floor and ceil without SSE4.1 (x86-64 baseline), instead of floorf/ceilf.
  }];
  let options = [
    Option<"fma", "fma", "bool", /*default=*/"true",
           "The target has fused multiply-add instructions">,
    Option<"rounding", "rounding", "bool", /*default=*/"true",
           "The target has SSE4.1 rounding instructions (else floor and ceil go through integers)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def FoldEmptyLoops : Pass<"hexir-fold-empty-loops", "mlir::ModuleOp"> {
  let summary = "Replaces linalg ops with a loop of extent 0 by their accumulator's initial value";
  let description = [{
    Runs on the graph. A linalg op on tensors with a zero-extent loop runs no iteration, so its
    results are its inits: a reduction over an empty axis becomes its fill (the neutral
    element), an op with an empty result its empty init.

    Before: `%s = linalg.generic ... ins(%x : tensor<3x0xf32>) outs(%zero : tensor<3xf32>)`
    reducing the second loop. After: `%zero` (the fill) is used in its place.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ExpandCopies : Pass<"hexir-expand-copies", "mlir::ModuleOp"> {
  let summary = "Rewrites memref.copy into linalg.copy";
  let description = [{
    memref.copy between non-contiguous memrefs lowers to a call of the `memrefCopy` runtime
    function, which a kernel library does not have. As linalg.copy it becomes plain loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

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
    lowers vector.contract to outer products and vector.fma, and transfers to rank 1.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
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

#endif // HEXIR_PASSES_TD

//===- Passes.td - Hexir graph passes --------------------------===//

#ifndef HEXIR_PASSES_TD
#define HEXIR_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyInput : Pass<"hexir-verify-input", "mlir::ModuleOp"> {
  let summary = "Selects the functions to compile and checks that each is a graph Hexir can compile";
  let description = [{
    Runs first, on the user's graph. The functions to compile are those `entries` names (the
    others are dropped), or every function definition of the input; each becomes a function
    of the executable, and they share its constant pool. Each must take and return statically
    shaped ranked f32 tensors, and contain only supported operations (the TOSA subset listed
    in docs/architecture.md, linalg ops on tensors, tensor.empty/pad/expand_shape/
    collapse_shape/extract_slice/insert_slice/concat and arith.constant); every value must
    have a static shape. Anything else is an error at the offending location saying what is
    wrong and what to do.

    Before: `func.func @main(%x: tensor<?x4xf32>)` — after: error
    "argument 0 of @main has type 'tensor<?x4xf32>' with a dynamic dimension; Hexir compiles
    static shapes only: give every dimension a size".
  }];
  let options = [
    ListOption<"entries", "entries", "std::string",
               "Functions to compile (default: every function definition)">,
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
  let options = [
    Option<"maxRewrites", "max-rewrites", "unsigned", /*default=*/"0",
           "Stop after this many rewrites (0: 50 per op of the graph, at least 10,000); tests set it low so that a layout ping-pong shows">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def ReducePrecision : Pass<"hexir-reduce-precision", "mlir::ModuleOp"> {
  let summary = "Runs contractions with constant f32 weights on bf16 operands, accumulating in f32";
  let description = [{
    --precision bf16. Runs on the graph after hexir-convert-to-channels-last. A contraction
    with one column and one reduction loop whose body is acc + a * b (MatMul, Gemm) reading a
    constant f32 matrix, and a linalg.conv_2d_nhwc_hwcf with a constant f32 filter, all into
    f32: the weights are rounded to bf16 at compile time (nearest, ties to even), the other
    operand by an elementwise op (one per activation, shared by its readers), and the body
    becomes acc + extf(a) * extf(b). Everything else stays f32.

    Without bf16-operands (a target without bf16 dot products), and for a contraction the
    packing passes could not group in pairs (an odd reduction, columns padded to whole panels
    over an initial value they cannot widen: DotGroups.h), the operands are rounded to bf16
    values but stay f32 tensors (truncf then extf): the same products on the f32 kernels.

    Before: `C = generic(A, W : f32)`. After: `Ab = generic(A) {truncf}`, `C = generic(Ab,
    Wb : bf16) {acc + extf * extf}`, Wb a bf16 constant.
  }];
  let options = [
    Option<"bf16Operands", "bf16-operands", "bool", /*default=*/"true",
           "bf16 tensors (the target has bf16 dot products); else values rounded to bf16 in f32 tensors">,
    Option<"maxPanel", "max-panel", "int64_t", /*default=*/"32",
           "The packing passes' widest panel (whether a contraction's columns are padded)">,
  ];
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

    With narrowing-epilogues (targets whose contraction kernels take an epilogue of another
    element type), an op reading two contractions' results through chains of elementwise ops
    (a QDQ residual add of two convolutions) keeps the other chains' narrowest tensors (the
    int8 output of a QuantizeLinear): the first chain becomes its epilogue, the others their own
    contractions' narrowing epilogues, and no int32 result is read across kernels.
  }];
  let options = [
    Option<"narrowingEpilogues", "narrowing-epilogues", "bool", /*default=*/"false",
           "Keep the narrowest tensor of every chain but one that joins an op reading several contractions">,
  ];
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
    extract_slice of the result. `max-panel` caps nr at the target's register tile (two
    vectors: 32 with AVX-512, 16 with AVX2, 8 with SSE).

    Before: `O = conv_2d_nhwc_hwcf(I, W)`. After: `O5 = generic(I, P)`, `O =
    collapse_shape(O5)`, P a constant.
  }];
  let options = [
    Option<"maxPanel", "max-panel", "int64_t", /*default=*/"32",
           "Widest panel (32, 16 or 8 floats): two of the target's vectors">,
    Option<"dotGroups", "dot-groups", "bool", /*default=*/"false",
           "Pack int8 and bf16 filters in dot-product groups of input channels">,
    Option<"int8Group", "int8-group", "int64_t", /*default=*/"4",
           "int8 values per group with dot-groups: 4 (VNNI vpdpbusd), 2 (vpmaddwd pairs), 0 (none)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def PackMatmulWeights : Pass<"hexir-pack-matmul-weights", "mlir::ModuleOp"> {
  let summary = "Stores the constant weights of matmuls as contiguous panels of the kernel's column tile";
  let description = [{
    Runs on the graph before dispatch formation. A contraction (linalg.generic) reading a
    constant f32 matrix B indexed by (k, n) or (n, k) gets B packed at compile time into
    panels P[n / nr][k][nr] (nr = 32, 16 or 8, the first that divides N and is at most
    `max-panel`, the target's register tile of two vectors), so the kernel's
    register tile reads nr consecutive floats at each reduction step instead of rows N floats
    apart (or, with transB, columns). The contraction runs over (..., m, no, ni, k) into its
    result viewed as [..., M, N/nr, nr]; its zero fill or bias broadcast is rebuilt in that
    shape.

    Before: `C[m, n] += A[m, k] * B[n, k]` (a Gemm with transB). After: `C3[m, no, ni] +=
    A[m, k] * P[no, k, ni]`, `C = collapse_shape(C3)`, P a constant.

    A run-time B indexed by (k, n) or (n, k) is packed into the same panels by an elementwise
    op before the contraction (K x N copies against M x N x K multiply-adds): always when k is
    innermost, else from 64 rows of A (32 where B's rows are a multiple of 4 KiB apart, so
    that a column of B falls into one L1 set). A batched run-time B read with k innermost
    (attention's Q x K^T) is transposed by an elementwise op instead, so its columns are
    contiguous too.
  }];
  let options = [
    Option<"maxPanel", "max-panel", "int64_t", /*default=*/"32",
           "Widest panel (32, 16 or 8 floats): two of the target's vectors">,
    Option<"dotGroups", "dot-groups", "bool", /*default=*/"false",
           "Pack int8 and bf16 weights in dot-product groups along the reduction">,
    Option<"int8Group", "int8-group", "int64_t", /*default=*/"4",
           "int8 values per group with dot-groups: 4 (VNNI vpdpbusd), 2 (vpmaddwd pairs), 0 (none)">,
  ];
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

    A pad of such a view becomes a view of the pad, except (with `window-borders`) a pad that
    a depthwise convolution or pooling reads and can do without (it computes its border
    itself, see borderPad in KernelClassification.h).
  }];
  let options = [
    Option<"windowBorders", "window-borders", "bool", /*default=*/"true",
           "Keep the view above a pad that a depthwise convolution or pooling computes the border of">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def CheckBucketRows : Pass<"hexir-check-bucket-rows", "mlir::ModuleOp"> {
  let summary = "Marks the shape buckets whose rows interact, so that they are never padded or batched";
  let description = [{
    Runs on the graph in linalg and tensor form, before dispatch formation. A session pads a
    request of 3 rows to the 4-row bucket and slices the answer back, and hexir-serve
    --max-batch runs several clients' rows as one batch. Both are exact only where every output
    row depends on its own input row alone; a Softmax over the batch, a reduction or a Gather
    along it, or a value that depends on a row's position would make one client's answer
    depend on zero rows or on another client's input.

    For each dimension the runtime would pad (vm/buckets.h: the leading axis of every input and
    output that carries it), the pass follows where the rows lie (an axis, and a block size once
    a reshape merges the row axis with the axes after it) through linalg ops (the row loop must
    be parallel, index one axis of each operand and result, and never be read as a position),
    reshapes, slices, pads and concatenations. Anything else that reads rows is assumed to mix
    them. Each bucket is also compared with its probes (`hexir.bucket_probe`: the model imported
    at the ends of the range padded into it, `hexir.bucket_probe_dim` naming the dimension): the
    bucket must be each probe's graph scaled, or it depends on its size (x / Shape(x)[0] folds
    to 4 in one and 2 in the other). A group where
    rows are not proved independent gets `hexir.rows_mixed_by` on every bucket of more than one
    row, naming the ONNX node and what it does; the probes are erased.

    Before: `func @main_batch4 {hexir.bucket_of = "main", ...}` computing a Softmax over axis 0.
    After: the same function with `hexir.rows_mixed_by = "dimension 'batch': node 'sm' combines
    rows (a reduction or contraction over them)"`.
  }];
}

def DeduplicateKernels : Pass<"hexir-deduplicate-kernels", "mlir::ModuleOp"> {
  let summary = "Makes dispatches of structurally identical kernels call one kernel";
  let description = [{
    Runs on the graph after dispatch formation. Two kernel functions that differ only in
    their names and locations compute the same thing (a ConvNeXt or a Swin repeats one block
    per stage: 160 dispatches, 29 different kernels), so each group keeps one kernel, every
    hexir.call_tir of the others calls it, and the others are erased. Every kernel pipeline
    then compiles each kernel once, which is most of a deep model's compile time.

    A redirected call keeps what it reports: `hexir.dispatch_name` holds the name its own
    kernel had (buffer names in plans and messages) and `hexir.sources` the source ops it
    covered (--print-dispatches, the profiler's sources).

    Before: `call_tir @main_dispatch_2_generic`, `call_tir @main_dispatch_5_generic` with the
    same body. After: both call `@main_dispatch_2_generic`; the second carries
    `hexir.dispatch_name = "main_dispatch_5_generic"`.
  }];
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
    copy disappear. With pack-in-kernel-max-rows N > 0, the run-time packing of a matmul's B
    into panels whose readers each have at most N rows
    (hexir-pack-matmul-weights) goes into each kernel that reads the panels, which packs each
    block of B where it uses it: B is read once and never written packed. With
    narrowing-epilogues, an epilogue may write another element type than its root (a QDQ
    convolution's int32 accumulators requantized to int8): the kernel narrows each register tile,
    and no int32 tensor exists.
    `fuse-producers=false` (hexir-compile --no-fusion) keeps them apart.
  }];
  let options = [
    Option<"fuseProducers", "fuse-producers", "bool", /*default=*/"true",
           "Compute epilogues, row kernels and (with pads-in-place) the producer of a pad in one kernel">,
    Option<"padsInPlace", "pads-in-place", "bool", /*default=*/"true",
           "Compute the producer of a pad inside the pad's kernel (targets whose kernels write the interior)">,
    Option<"narrowingEpilogues", "narrowing-epilogues", "bool", /*default=*/"false",
           "Fuse an epilogue of another element type than its root's (int32 accumulators requantized to int8) into a contraction's or convolution's kernel (targets whose kernels narrow each register tile)">,
    Option<"packInKernelMaxRows", "pack-in-kernel-max-rows", "int64_t", /*default=*/"128",
           "Pack a run-time matmul B into panels inside each kernel that reads them, where each has at most this many rows (0: never; the target's maxRowsPackedInKernel)">,
  ];
  let dependentDialects = ["mlir::hexir::HexirDialect", "mlir::func::FuncDialect",
                           "mlir::bufferization::BufferizationDialect", "mlir::tensor::TensorDialect"];
}

def OutlineControlFlow : Pass<"hexir-outline-control-flow", "mlir::ModuleOp"> {
  let summary = "Turns scf.if and scf.while on tensors into hexir.if and hexir.loop over body functions";
  let description = [{
    Runs first on an MLIR input. A graph's `scf.if` whose results are tensors becomes a
    `hexir.if` whose branches are new functions marked `hexir.body` (the values a branch reads
    from outside become its captures; constants are copied in). An `scf.while` becomes a
    `hexir.loop` with a condition: its `before` region runs once in the graph on the initial
    values, and the loop's body runs `after`, then `before` on its results, carrying the
    condition and the values `scf.condition` forwards. A condition must be a one-element
    `tensor<i8>` (a bool) read by `tensor.extract` (then `arith.trunci` to `i1`, or
    `arith.cmpi ne` against 0), since Hexir's graphs pass tensors only.

    Before: `%r = scf.if %p -> tensor<4xf32> { ... } else { ... }` with
    `%p = arith.trunci (tensor.extract %c[])`. After:
    `%r = hexir.if %c then @main_then_0(...) else @main_else_0(...)`.
  }];
  let dependentDialects = ["mlir::hexir::HexirDialect", "mlir::func::FuncDialect"];
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

#endif // HEXIR_PASSES_TD

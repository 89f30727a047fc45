//===- HexirOps.td - the Hexir dialect ------------------------------------===//
//
// The graph-level dialect of Hexir: after dispatch formation, an entry function is a list of
// hexir.call_tir ops over static tensors, constants and reshape views. Every call_tir names a
// kernel function in destination-passing style: it reads its inputs and writes its results into
// buffers the memory planner chose.
//
// It also holds the few kernel-level ops Hexir's code generators share between passes
// (hexir.workgroup_range for the host, hexir.warp_mma for CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef HEXIR_OPS_TD
#define HEXIR_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Hexir_Dialect : Dialect {
  let name = "hexir";
  let cppNamespace = "::mlir::hexir";
  let summary = "Hexir: kernel dispatches over statically planned memory";
  let description = [{
    The dialect in which Hexir expresses a graph after dispatch formation. Kernels are plain
    `func.func` ops marked `hexir.kernel`; the graph calls them with `hexir.call_tir`.
  }];
}

class Hexir_Op<string mnemonic, list<Trait> traits = []> :
    Op<Hexir_Dialect, mnemonic, traits>;

def Hexir_CallTirOp : Hexir_Op<"call_tir",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "dispatches a kernel function in destination-passing style";
  let description = [{
    Calls the kernel function `callee` with the tensor `inputs`. The results are the
    destinations the kernel writes: at run time each result is a buffer chosen by the memory
    planner (an arena slot, or the caller's output buffer), and the kernel receives the input
    buffers followed by the result buffers. The callee is a `func.func` marked `hexir.kernel`
    whose argument and result types equal the operand and result types. The kernel is pure: it
    reads only its inputs and writes only its results, so a call_tir without uses can be erased.

    Example:

    ```mlir
    %y = hexir.call_tir @main_dispatch_0_matmul(%x, %w)
        : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
}

def Hexir_LoopOp : Hexir_Op<"loop",
    [AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a body function once per trip, carrying values between trips";
  let description = [{
    ONNX's Loop. The body is a graph function marked `hexir.body` taking (the trip number as
    `tensor<i64>`, the carried values, the captures) and returning (the carried values of the
    next trip, then one value per scan output). Trips: at most `max_trips` (0: no static
    bound), at most the i64 `trip_count` when given, and while the carried value 0 (a bool:
    rank-0 `tensor<i8>`) is set when `has_condition`. The results are the carried values after
    the last trip, then the scan outputs: each stacks every trip's value along a new leading
    dimension of `max_trips`, so it needs a static trip count (neither `trip_count` nor a
    condition). At run time it is a LOOP command; the body's buffers are planned once and
    reused by every trip.
    ```mlir
    %acc, %rows = hexir.loop @main_loop_0 inits(%x) captures(%w) {max_trips = 4 : i64}
        : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$body, I64Attr:$max_trips, UnitAttr:$has_condition,
                       Optional<AnyRankedTensor>:$trip_count, Variadic<AnyRankedTensor>:$inits,
                       Variadic<AnyRankedTensor>:$captures);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $body (`count` `(` $trip_count^ `)`)? `inits` `(` $inits `)` `captures` `(` $captures `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    // Results past the carried values: the stacked scan outputs.
    unsigned getNumScans() { return getNumResults() - getInits().size(); }
  }];
}

def Hexir_IfOp : Hexir_Op<"if",
    [AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs one of two body functions on a bool";
  let description = [{
    ONNX's If. `condition` is a bool (a one-element `tensor<i8>`); `then_body` runs on its
    captures when it is set, else `else_body` on its own. Both are graph functions marked
    `hexir.body` returning the results' types. At run time it is an IF command.
    ```mlir
    %y = hexir.if %c then @main_then_0(%x) else @main_else_0(%x)
        : (tensor<i8>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$then_body, FlatSymbolRefAttr:$else_body, AnyRankedTensor:$condition,
                       Variadic<AnyRankedTensor>:$then_captures, Variadic<AnyRankedTensor>:$else_captures);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $condition `then` $then_body `(` $then_captures `)` `else` $else_body `(` $else_captures `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

def Hexir_WorkgroupRangeOp : Hexir_Op<"workgroup_range", [Pure]> {
  let summary = "the range of workgroups one invocation of a kernel runs";
  let description = [{
    Inside a kernel function: the workgroups [begin, end) the caller asks for. The host
    runtime splits a dispatch of N workgroups into ranges, one per thread. Code generation
    uses it to bound the workgroup loop of a kernel tiled on tensors; hexir-distribute-workgroups
    replaces it with the kernel's two trailing i32 arguments.

    ```mlir
    %begin, %end = hexir.workgroup_range
    ```
  }];
  let results = (outs Index:$begin, Index:$end);
  let assemblyFormat = "attr-dict";
}

def Hexir_WarpMmaOp : Hexir_Op<"warp_mma", [RecursiveMemoryEffects]> {
  let summary = "one lane's share of a warp's 16x8x8 TF32 matrix multiply-accumulate";
  let description = [{
    In a CUDA kernel whose every lane of a warp runs it together: D = C + A x B, A 16x8 and
    B 8x8, their elements rounded to TF32 (round to nearest, ties away: `cvt.rna.tf32.f32`),
    the products summed in f32. The regions give the elements: `a` yields A(m, k) and `b`
    yields B(k, n) for the block arguments' row and column; they may only read memory every
    lane sees alike (shared memory), which is what lets the CUDA emulator compute one lane's
    outputs on its own. The lane (`lane`, its index in the warp) holds four elements of C and
    D, in the `mma.sync.m16n8k8` fragment layout: rows lane / 4 and lane / 4 + 8, columns
    2 (lane % 4) and 2 (lane % 4) + 1, row-major. On a GPU this is one `mma.sync` of tensor
    cores (hexir-cuda-lower-warp-mma); the emulator runs it as the dot products it defines.

    ```mlir
    %d:4 = hexir.warp_mma lane(%l) acc(%c0, %c1, %c2, %c3) a {
    ^bb0(%m: index, %k: index):
      %v = memref.load %tile[%m, %k] : memref<64x16xf32, 3>
      hexir.yield %v : f32
    } b {
    ^bb0(%k: index, %n: index):
      %v = memref.load %tile2[%k, %n] : memref<16x64xf32, 3>
      hexir.yield %v : f32
    } : f32, f32, f32, f32
    ```
  }];
  let arguments = (ins Index:$lane, Variadic<F32>:$acc);
  let results = (outs Variadic<F32>:$results);
  let regions = (region SizedRegion<1>:$a, SizedRegion<1>:$b);
  let assemblyFormat = [{
    `lane` `(` $lane `)` `acc` `(` $acc `)` `a` $a `b` $b attr-dict `:` type($results)
  }];
  let hasVerifier = 1;
}

def Hexir_YieldOp : Hexir_Op<"yield", [Pure, Terminator, HasParent<"WarpMmaOp">]> {
  let summary = "the element a hexir.warp_mma region gives";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // HEXIR_OPS_TD

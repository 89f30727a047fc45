//===- HexirDialect.h - the Hexir dialect and its ops ----------*- C++ -*-===//
#ifndef HEXIR_COMPILER_DIALECT_HEXIRDIALECT_H
#define HEXIR_COMPILER_DIALECT_HEXIRDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Dialect/HexirDialect.h.inc"

#define GET_OP_CLASSES
#include "Dialect/HexirOps.h.inc"

namespace mlir::hexir {
// Unit attribute on a func.func that is a kernel (an outlined dispatch), not a graph.
inline constexpr llvm::StringLiteral kKernelAttrName = "hexir.kernel";
// String attribute on an entry function's argument or result: its name in the signature.
inline constexpr llvm::StringLiteral kNameAttrName = "hexir.name";
// Unit attribute on an entry function's argument: the caller donates the buffer, which the
// module may update in place (an output computed from it is then tied to it).
inline constexpr llvm::StringLiteral kDonateAttrName = "hexir.donate";
// On a graph function that is a shape bucket (hexir-compile --dim): the model function it is a
// bucket of (string), and its symbolic dimensions' names (array of strings) and values
// (dense i64 array), in the order --dim gave them.
inline constexpr llvm::StringLiteral kBucketOfAttrName = "hexir.bucket_of";
inline constexpr llvm::StringLiteral kBucketDimNamesAttrName = "hexir.bucket_dim_names";
inline constexpr llvm::StringLiteral kBucketDimValuesAttrName = "hexir.bucket_dim_values";
// String attribute on a shape bucket whose rows interact (hexir-check-bucket-rows): the op and
// why. The runtime then neither pads a request to it nor batches requests into it.
inline constexpr llvm::StringLiteral kRowsMixedByAttrName = "hexir.rows_mixed_by";
// String attribute on a function imported at another size only to check the bucket it names
// (the smallest size padded into it; its loop and branch bodies carry it too): erased by
// hexir-check-bucket-rows, never compiled.
inline constexpr llvm::StringLiteral kBucketProbeAttrName = "hexir.bucket_probe";
// Dictionary attribute (string -> string) on the module: what an ONNX model says of itself
// (metadata_props, and "onnx:producer_name" etc.), carried into the executable's metadata.
inline constexpr llvm::StringLiteral kModelMetadataAttrName = "hexir.model_metadata";
// On a probe: the index of the dimension (in --dim order) whose size it changes.
inline constexpr llvm::StringLiteral kBucketProbeDimAttrName = "hexir.bucket_probe_dim";
// On a bucket (dense i64 array, per dimension): the smallest size a request may have along it to
// be padded to this bucket, the smallest size the driver probed (its own size: none padded).
inline constexpr llvm::StringLiteral kBucketPadsFromAttrName = "hexir.bucket_pads_from";
// Unit attribute on a graph function that is the body of a hexir.loop or a branch of a
// hexir.if: compiled with the graph that runs it, never a function of the executable.
inline constexpr llvm::StringLiteral kBodyAttrName = "hexir.body";
// String attribute on an entry function's integer argument or result saying what its bits are:
// "i8" or "u8" on i8 (without it an i8 at the interface is a bool); "u16", "f16" or "bf16" on
// i16 (16-bit floats cross the interface as their bits, converted inside the graph); "u32" on
// i32, "u64" on i64.
inline constexpr llvm::StringLiteral kElementTypeAttrName = "hexir.element_type";
// On a hexir.call_tir that hexir-deduplicate-kernels redirected to an identical kernel: the
// name of the kernel it had (string) and the source ops that kernel covered (array of strings),
// so that buffer names and reports stay those of the dispatch.
inline constexpr llvm::StringLiteral kDispatchNameAttrName = "hexir.dispatch_name";
inline constexpr llvm::StringLiteral kSourcesAttrName = "hexir.sources";
} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DIALECT_HEXIRDIALECT_H

//===- Passes.h - Hexir passes and pipelines -------------------*- C++ -*-===//
#ifndef HEXIR_COMPILER_TRANSFORMS_PASSES_H
#define HEXIR_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "Dialect/HexirDialect.h"

namespace mlir::hexir {

// The workgroup count DistributeWorkgroups records on each kernel.
inline constexpr llvm::StringLiteral kWorkgroupsAttrName = "hexir.workgroups";

#define GEN_PASS_DECL
#include "Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Transforms/Passes.h.inc"

// Whether hexir-tile-and-vectorize generates vector code for a kernel rooted at `op` (dispatch
// formation fuses a producer into the kernel of the pad that reads it only then).
bool isHostVectorizable(linalg::LinalgOp op);
// The register tile of a vectorized innermost dimension of `extent` elements: rows up to four
// vectors of `lanes` long, a divisor of the extent.
int64_t rowTile(int64_t extent, int64_t lanes);

// tosa -> linalg/tensor/arith on tensors, then canonicalize (nested on func.func).
void buildLowerTosaPipeline(OpPassManager &pm);
// The graph pipeline: verify input, lower TOSA, channels-last, fuse elementwise chains (unless
// `fuseElementwise` is false), form dispatches.
void buildGraphPipeline(OpPassManager &pm, llvm::StringRef entry, bool fuseElementwise = true);
// What the kernel pipeline needs to know about the target.
struct KernelPipelineOptions {
  int64_t vectorBits = 256;  // vector register width: 128 (SSE), 256 (AVX2), 512 (AVX-512)
  bool fma = true;           // fused multiply-add instructions
  bool rounding = true;      // SSE4.1 roundss/roundps (floor, ceil)
};
// Kernel functions on tensors -> LLVM dialect with the bare-pointer ABI
// `void kernel(ptr in0, ..., ptr out0, ..., i32 wg_begin, i32 wg_end)`.
void buildKernelToLLVMPipeline(OpPassManager &pm, const KernelPipelineOptions &options = {});
// Registers the named pipelines for hexir-opt.
void registerHexirPipelines();

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_PASSES_H

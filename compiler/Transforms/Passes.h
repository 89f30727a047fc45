//===- Passes.h - Hexir graph passes and pipelines -------------------*- C++ -*-===//
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

#include <functional>
#include <memory>

namespace mlir::hexir {

#define GEN_PASS_DECL
#include "Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Transforms/Passes.h.inc"

// tosa -> linalg/tensor/arith on tensors, then canonicalize (nested on func.func).
void buildLowerTosaPipeline(OpPassManager &pm);
// What the graph pipeline asks of the target it compiles for (its TargetDescription and
// TargetBackend::fusesIntoKernel); the defaults are the passes' own.
struct GraphTargetRules {
  // Whether its kernels write a pad's producer into the padded tensor (padProducersInKernel).
  bool padsInPlace = true;
  // The widest panel constant weights are packed into.
  int64_t maxPanel = 32;
  // int8 values per dot-product group the weights are packed in: 4 (VNNI), 2 (vpmaddwd pairs),
  // 0: none (TargetDescription::int8DotGroup).
  int64_t int8DotGroup = 0;
  // --precision bf16: contractions with constant weights on bf16 operands (ReducePrecision),
  // as bf16 tensors packed in dot-product pairs where the target has them (bf16DotGroups).
  bool bf16 = false;
  bool bf16DotGroups = false;
  // Whether its kernels narrow a contraction's register tiles in an epilogue of another
  // element type (TargetDescription::narrowingEpilogues).
  bool narrowingEpilogues = false;
  // Readers of at most this many rows pack a run-time matmul B themselves (0: never).
  int64_t maxRowsPackedInKernel = 128;
  // Whether it fuses other ops into a kernel rooted at an op; empty: classifyKernel's kinds.
  std::function<bool(linalg::LinalgOp)> fusesIntoKernel;
};
// The graph pipeline: verify input, lower TOSA, channels-last, fuse elementwise chains (unless
// `fuseElementwise` is false), form dispatches by the target's rules.
void buildGraphPipeline(OpPassManager &pm, ArrayRef<std::string> entries, bool fuseElementwise = true,
                        const GraphTargetRules &rules = {});
// Dispatch formation asking `fusesIntoKernel` (see GraphTargetRules) before it fuses an
// epilogue or a producer into a kernel.
std::unique_ptr<Pass> createOutlineDispatches(const OutlineDispatchesOptions &options,
                                              std::function<bool(linalg::LinalgOp)> fusesIntoKernel);
// Kernel functions on tensors -> on buffers, for every target: one-shot bufferization with
// read-only arguments and identity layouts, results as trailing out-parameters.
void buildBufferizeKernelsPipeline(OpPassManager &pm);
// The dimensions of shape buckets (functions of one model, hexir.bucket_of) that a session
// pads: the leading axis of every input and output that carries them (vm/buckets.h's rule).
SmallVector<size_t> paddedBucketDims(ArrayRef<func::FuncOp> buckets);
// Registers the named graph pipeline `hexir-lower-tosa` for hexir-opt.
void registerHexirPipelines();

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_PASSES_H

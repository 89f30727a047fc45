//===- Pipelines.cpp - the pass pipelines of the Hexir compiler -----------===//
#include "Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hexir::buildLowerTosaPipeline(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Named ops first (conv, matmul, pooling) so the elementwise lowering does not see them.
  fn.addPass(tosa::createTosaToLinalgNamed());
  fn.addPass(tosa::createTosaToLinalg());
  fn.addPass(createTosaToArithPass());
  fn.addPass(createTosaToTensorPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::hexir::buildGraphPipeline(OpPassManager &pm, ArrayRef<std::string> entries, bool fuseElementwise,
                                     const GraphTargetRules &rules) {
  bool padsInPlace = rules.padsInPlace;
  int64_t maxPanel = rules.maxPanel;
  // scf.if and scf.while on tensors become hexir.if and hexir.loop over body functions.
  pm.addPass(createOutlineControlFlow());
  // Reject what we cannot compile while locations still point at the user's ops.
  VerifyInputOptions verify;
  verify.entries = llvm::to_vector(entries);
  pm.addPass(createVerifyInput(verify));
  buildLowerTosaPipeline(pm);
  // Loops without iterations (reductions over empty axes) fold before any kernel sees them.
  pm.addPass(createFoldEmptyLoops());
  // Which shape buckets may be padded or batched: proved on linalg before layouts change.
  pm.addPass(createCheckBucketRows());
  // Convolutions vectorize along channels: NHWC inside, NCHW only at the edges.
  pm.addPass(createConvertToChannelsLast());
  pm.addPass(createCanonicalizerPass());
  // --precision bf16: before elementwise fusion, so that rounding an activation joins the ops
  // that produce it.
  if (rules.bf16) {
    ReducePrecisionOptions precision;
    precision.bf16Operands = rules.bf16DotGroups;
    precision.maxPanel = maxPanel;
    pm.addPass(createReducePrecision(precision));
    pm.addPass(createCanonicalizerPass());
  }
  // Chains of elementwise ops (GELU, SiLU, softmax steps) as one op.
  if (fuseElementwise) {
    FuseElementwiseOptions fuse;
    fuse.narrowingEpilogues = rules.narrowingEpilogues;
    pm.addPass(createFuseElementwise(fuse));
    pm.addPass(createCanonicalizerPass());
  }
  // Constant matmul weights and convolution filters as panels the register tile reads
  // contiguously, at most as wide as the target's register tile.
  PackConvFiltersOptions convPanels;
  convPanels.maxPanel = maxPanel;
  convPanels.dotGroups = rules.int8DotGroup != 0 || rules.bf16DotGroups;
  convPanels.int8Group = rules.int8DotGroup;
  pm.addPass(createPackConvFilters(convPanels));
  PackMatmulWeightsOptions matmulPanels;
  matmulPanels.maxPanel = maxPanel;
  matmulPanels.dotGroups = rules.int8DotGroup != 0 || rules.bf16DotGroups;
  matmulPanels.int8Group = rules.int8DotGroup;
  pm.addPass(createPackMatmulWeights(matmulPanels));
  pm.addPass(createCanonicalizerPass());
  // Elementwise readers of packed results read them directly (they become epilogues).
  if (fuseElementwise) {
    SinkPackedViewsOptions sink;
    sink.windowBorders = padsInPlace;
    pm.addPass(createSinkPackedViews(sink));
    pm.addPass(createCanonicalizerPass());
  }
  // Dispatch formation: one kernel per compute op, the graph becomes call_tir.
  OutlineDispatchesOptions outline;
  outline.fuseProducers = fuseElementwise;
  outline.padsInPlace = padsInPlace;
  outline.packInKernelMaxRows = rules.maxRowsPackedInKernel;
  outline.narrowingEpilogues = rules.narrowingEpilogues;
  pm.addPass(createOutlineDispatches(outline, rules.fusesIntoKernel));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Repeated blocks share their kernels: each distinct kernel is compiled once.
  pm.addPass(createDeduplicateKernels());
}

void mlir::hexir::buildBufferizeKernelsPipeline(OpPassManager &pm) {
  // Tensors -> buffers; kernel arguments are read-only (marked by dispatch formation) and
  // results become out-parameters: `void k(in..., out...)`. modify-public-functions: without
  // it MLIR 22 leaves public kernels returning a malloc'd buffer.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Tiled loops on tensors bufferize in place into loops that yield their own iter_args and
  // copy subviews onto themselves; folding those lets the returned buffer be the result
  // allocation again, which the next pass replaces by the out-parameter.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void mlir::hexir::registerHexirPipelines() {
  PassPipelineRegistration<>("hexir-lower-tosa",
                             "Lowers TOSA to linalg, tensor and arith on tensors",
                             buildLowerTosaPipeline);
}

//===- Pipelines.cpp - the pass pipelines of the Hexir compiler -----------===//
#include "Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
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

void mlir::hexir::buildGraphPipeline(OpPassManager &pm, llvm::StringRef entry, bool fuseElementwise) {
  // Reject what we cannot compile while locations still point at the user's ops.
  VerifyInputOptions verify;
  verify.entry = entry.str();
  pm.addPass(createVerifyInput(verify));
  buildLowerTosaPipeline(pm);
  // Loops without iterations (reductions over empty axes) fold before any kernel sees them.
  pm.addPass(createFoldEmptyLoops());
  // Convolutions vectorize along channels: NHWC inside, NCHW only at the edges.
  pm.addPass(createConvertToChannelsLast());
  pm.addPass(createCanonicalizerPass());
  // Chains of elementwise ops (GELU, SiLU, softmax steps) as one op.
  if (fuseElementwise) {
    pm.addPass(createFuseElementwise());
    pm.addPass(createCanonicalizerPass());
  }
  // Constant matmul weights and convolution filters as panels the register tile reads
  // contiguously.
  pm.addPass(createPackConvFilters());
  pm.addPass(createPackMatmulWeights());
  pm.addPass(createCanonicalizerPass());
  // Elementwise readers of packed results read them directly (they become epilogues).
  if (fuseElementwise) {
    pm.addPass(createSinkPackedViews());
    pm.addPass(createCanonicalizerPass());
  }
  // Dispatch formation: one kernel per compute op, the graph becomes call_tir.
  OutlineDispatchesOptions outline;
  outline.fuseProducers = fuseElementwise;
  pm.addPass(createOutlineDispatches(outline));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::hexir::buildKernelToLLVMPipeline(OpPassManager &pm, const KernelPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Contractions and convolutions: workgroup, cache and register tiles, vectorized on tensors.
  TileAndVectorizeOptions tiling;
  tiling.vectorBits = options.vectorBits;
  pm.addPass(hexir::createTileAndVectorize(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
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
  // Small temporaries (a pooling window) live on the stack; kernels never allocate.
  pm.addNestedPass<func::FuncOp>(bufferization::createPromoteBuffersToStackPass());
  pm.addPass(hexir::createExpandCopies());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Accumulators in registers, contractions as FMA outer products.
  pm.addPass(hexir::createLowerVectorTiles());
  // Independent workgroups along an output dimension, for the host thread pool (kernels that
  // TileAndVectorize split keep its split).
  pm.addPass(hexir::createDistributeWorkgroups());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  ApproximateMathOptions approximate;
  approximate.fma = options.fma;
  approximate.rounding = options.rounding;
  pm.addPass(hexir::createApproximateMath(approximate));
  // Fully unrolled: the n-D transfers left (an accumulator tile, a strided column of pixels)
  // become 1-D ones, not loops over a stack buffer allocated in every iteration.
  pm.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  // Kernels never allocate: static stack buffers, released in loops, 64 KiB at most.
  pm.addPass(hexir::createCheckKernelStack());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::hexir::registerHexirPipelines() {
  PassPipelineRegistration<>("hexir-lower-tosa",
                             "Lowers TOSA to linalg, tensor and arith on tensors",
                             buildLowerTosaPipeline);
  PassPipelineRegistration<>("hexir-lower-kernels-to-llvm",
                             "Lowers kernel functions on tensors to the LLVM dialect "
                             "with the bare-pointer kernel ABI",
                             [](OpPassManager &pm) { buildKernelToLLVMPipeline(pm); });
}

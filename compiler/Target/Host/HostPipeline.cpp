//===- HostPipeline.cpp - the host target's kernel pipeline ---------------===//
#include "Target/Host/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hexir::buildHostKernelPipeline(OpPassManager &pm, const KernelPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Contractions and convolutions: workgroup, cache and register tiles, vectorized on tensors.
  TileAndVectorizeOptions tiling;
  tiling.vectorBits = options.vectorBits;
  pm.addPass(createTileAndVectorize(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildBufferizeKernelsPipeline(pm);
  // Small temporaries (a pooling window) live on the stack; kernels never allocate.
  pm.addNestedPass<func::FuncOp>(bufferization::createPromoteBuffersToStackPass());
  pm.addPass(createExpandCopies());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Accumulators in registers, contractions as FMA outer products.
  LowerVectorTilesOptions lowering;
  lowering.dotBits = options.dotBits;
  lowering.pairBits = options.pairBits;
  lowering.bf16DotBits = options.bf16DotBits;
  pm.addPass(createLowerVectorTiles(lowering));
  // Weights stream from memory on every run: fetch the next block while this one is reused.
  pm.addPass(createPrefetchStreams());
  buildHostLoopsToLLVMPipeline(pm, options);
}

void mlir::hexir::buildHostLoopsToLLVMPipeline(OpPassManager &pm, const KernelPipelineOptions &options) {
  // Independent workgroups along an output dimension, for the host thread pool (kernels that
  // TileAndVectorize split keep its split).
  pm.addPass(createDistributeWorkgroups());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  ApproximateMathOptions approximate;
  approximate.fma = options.fma;
  approximate.rounding = options.rounding;
  approximate.bf16 = options.bf16DotBits != 0;
  pm.addPass(createApproximateMath(approximate));
  // Fully unrolled: the n-D transfers left (an accumulator tile, a strided column of pixels)
  // become 1-D ones, not loops over a stack buffer allocated in every iteration.
  pm.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  // Kernels never allocate: static stack buffers, released in loops, 64 KiB at most.
  CheckKernelStackOptions stack;
  stack.maxStackBytes = options.maxStackBytes;
  pm.addPass(createCheckKernelStack(stack));
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

namespace {
struct HostPipelineOptions : public PassPipelineOptions<HostPipelineOptions> {
  Option<int64_t> vectorBits{*this, "vector-bits", llvm::cl::desc("Vector register width in bits"),
                             llvm::cl::init(256)};
  Option<int64_t> dotBits{*this, "dot-bits", llvm::cl::desc("int8 dot products (VNNI) on vectors of this many bits"),
                          llvm::cl::init(0)};
  Option<int64_t> pairBits{*this, "pair-bits",
                           llvm::cl::desc("int8 products of pairs (vpmaddwd) on vectors of this many bits"),
                           llvm::cl::init(0)};
  Option<int64_t> bf16DotBits{*this, "bf16-dot-bits",
                              llvm::cl::desc("bf16 dot products (AVX512-BF16) on vectors of this many bits"),
                              llvm::cl::init(0)};
};
} // namespace

void mlir::hexir::registerHostPassesAndPipelines() {
  registerHexirHostPasses();
  PassPipelineRegistration<HostPipelineOptions>("hexir-lower-kernels-to-llvm",
                                                "Lowers kernel functions on tensors to the LLVM dialect "
                                                "with the bare-pointer kernel ABI (the host kernel pipeline)",
                                                [](OpPassManager &pm, const HostPipelineOptions &options) {
                                                  KernelPipelineOptions kernel;
                                                  kernel.vectorBits = options.vectorBits;
                                                  kernel.dotBits = options.dotBits;
                                                  kernel.pairBits = options.pairBits;
                                                  kernel.bf16DotBits = options.bf16DotBits;
                                                  buildHostKernelPipeline(pm, kernel);
                                                });
}

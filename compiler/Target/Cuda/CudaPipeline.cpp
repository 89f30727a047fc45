//===- CudaPipeline.cpp - the CUDA target's kernel pipeline ---------------===//
#include "Target/Cuda/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::hexir::buildCudaOutliningPipeline(OpPassManager &pm, const CudaPipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Matmuls and convolutions large enough: thread blocks staging their tiles in shared memory.
  StageContractionsOptions stage;
  stage.capacity = options.sharedMemoryBytes;
  pm.addPass(createStageContractions(stage));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Reductions with too few outputs to fill the GPU: each output's values shared by a block's threads.
  pm.addPass(createSplitReductions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // One thread per output element (or row), producers fused: one loop nest per kernel.
  pm.addPass(createTileToThreads());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Tensors -> buffers as on the host: read-only arguments, results as out-parameters.
  buildBufferizeKernelsPipeline(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OutlineGpuKernelsOptions outline;
  outline.chip = options.chip;
  outline.blockSize = options.blockSize;
  outline.capacity = options.sharedMemoryBytes;
  outline.allowTf32 = options.allowTf32;
  pm.addPass(createOutlineGpuKernels(outline));
  CheckSharedMemoryOptions shared;
  shared.capacity = options.sharedMemoryBytes;
  pm.addPass(createCheckSharedMemory(shared));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::hexir::buildCudaSerializationPipeline(OpPassManager &pm, const CudaPipelineOptions &options) {
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip;
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // Simple math (fabs, floor, sqrt, fma) as LLVM intrinsics NVPTX has instructions for; the
  // NVVM conversion would call libdevice for them.
  kernels.addPass(createConvertMathToLLVMPass());
  // Tensor-core tiles (TensorCoreTiles.h) as mma.sync, then it and the cp.async copies
  // (PipelineCopies.h) as NVVM.
  kernels.addPass(createLowerWarpMma());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";  // PTX text: LLVM's NVPTX backend, no CUDA toolkit
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
// hexir-opt's options of the named pipeline (hexir-compile sets them from its flags).
struct CudaPipelineFlags : public PassPipelineOptions<CudaPipelineFlags> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("The CUDA architecture"), llvm::cl::init("sm_90")};
  Option<bool> allowTf32{*this, "allow-tf32", llvm::cl::desc("f32 contractions on tensor cores in TF32 (sm_80+)"),
                         llvm::cl::init(false)};
};
} // namespace

void mlir::hexir::registerCudaPassesAndPipelines() {
  registerHexirCudaPasses();
  PassPipelineRegistration<CudaPipelineFlags>(
      "hexir-cuda-lower-kernels", "Lowers kernel functions on tensors to a gpu.binary of PTX (the CUDA kernel pipeline)",
      [](OpPassManager &pm, const CudaPipelineFlags &flags) {
        CudaPipelineOptions options;
        options.chip = flags.chip;
        options.allowTf32 = flags.allowTf32;
        buildCudaOutliningPipeline(pm, options);
        buildCudaSerializationPipeline(pm, options);
      });
}

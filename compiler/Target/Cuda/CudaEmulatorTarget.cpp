//===- CudaEmulatorTarget.cpp - CUDA kernels run on the host CPU ----------===//
//
// The `cuda-emulator` target compiles a graph exactly as the `cuda` target does up to the
// outlined gpu.funcs (dispatch formation, thread tiling, fusion, bufferization, one launch per
// loop nest), then runs each kernel's blocks as host workgroups and its threads as a loop
// (EmulateGpuKernels) through the host code generator. Machines without a GPU, CI among
// them, check the CUDA kernels' results against PyTorch with it; speed means nothing here.
//
//===----------------------------------------------------------------------===//
#include "Target/Cuda/CudaKernels.h"
#include "Target/Cuda/CudaTarget.h"
#include "Target/Host/HostCodegen.h"

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

namespace {

class CudaEmulatorTarget final : public TargetBackend {
public:
  CudaEmulatorTarget(HostTargetOptions host, KernelPipelineOptions hostPipeline, bool reverse)
      : host_(std::move(host)), hostPipeline_(hostPipeline), reverse_(reverse) {
    // An emulated block's stack holds its shared memory (at most the 48 KiB a block declares
    // statically) and every thread's private tile (at most 256 threads x 64 floats: 64 KiB),
    // then one thread's frame: 128 KiB, not the host kernels' 64 (tests run it on threads with
    // the system's 8 MiB stacks).
    hostPipeline_.maxStackBytes = 128 * 1024;
    description_.name = reverse ? "cuda-emulator-reversed" : "cuda-emulator";
    description_.kernelFormat = ser::KernelFormat::HostElf;
    description_.memorySpaces.push_back({"host", 0, 64, true, true});
    description_.padProducersInKernel = false;  // as the cuda target
    description_.maxRowsPackedInKernel = 0;
  }

  const TargetDescription &description() const override { return description_; }

  void buildKernelPipeline(OpPassManager &pm) const override {
    buildCudaOutliningPipeline(pm, cuda_);
    pm.addPass(createEmulateGpuKernels(EmulateGpuKernelsOptions{reverse_}));
    buildHostLoopsToLLVMPipeline(pm, hostPipeline_);
  }

  FailureOr<ser::KernelLibrary> compileKernels(ModuleOp module) const override {
    FailureOr<OutlinedCudaKernels> outlined = outlineCudaKernels(module, cuda_);
    if (failed(outlined))
      return failure();
    ser::KernelLibrary library;
    library.format = ser::KernelFormat::HostElf;
    if (outlined->entries.empty())
      return library;
    ModuleOp kernelModule = *outlined->module;
    PassManager pm(module.getContext());
    pm.addPass(createEmulateGpuKernels(EmulateGpuKernelsOptions{reverse_}));
    buildHostLoopsToLLVMPipeline(pm, hostPipeline_);
    if (failed(pm.run(kernelModule)))
      return module.emitError() << "lowering the emulated CUDA kernels to LLVM failed (see the errors above)";
    SmallVector<KernelInfo> kernels;
    for (const ser::KernelEntry &e : outlined->entries) {
      KernelInfo info{e.name, e.arity, e.workgroups, 0, e.binding_bytes};
      if (auto stack = kernelModule.lookupSymbol(e.name)->getAttrOfType<IntegerAttr>("hexir.stack_bytes"))
        info.stackBytes = static_cast<unsigned>(stack.getInt());
      kernels.push_back(std::move(info));
    }
    return packageHostKernels(kernelModule, kernels, host_, module.getLoc());
  }

  void setCudaOptions(const std::string &chip, bool allowTf32) {
    cuda_.chip = chip;
    cuda_.allowTf32 = allowTf32;
  }

private:
  CudaPipelineOptions cuda_;
  HostTargetOptions host_;
  KernelPipelineOptions hostPipeline_;
  bool reverse_;
  TargetDescription description_;
};

} // namespace

static FailureOr<std::unique_ptr<TargetBackend>> createEmulator(const TargetOptions &options, Location loc,
                                                                bool reverse) {
  HostTargetOptions host = hostTargetOptions(options);
  FailureOr<KernelPipelineOptions> pipeline = describeHostTarget(host, loc);
  if (failed(pipeline))
    return failure();
  auto emulator = std::make_unique<CudaEmulatorTarget>(std::move(host), *pipeline, reverse);
  // The CUDA kernels it emulates: sm_90's unless --cuda-arch says otherwise, and TF32
  // tensor-core tiles where --allow-tf32 asks for them (computed as the GPU rounds).
  emulator->setCudaOptions(options.cudaArch, options.allowTf32);
  return std::unique_ptr<TargetBackend>(std::move(emulator));
}

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createCudaEmulatorTarget(const TargetOptions &options,
                                                                               Location loc) {
  return createEmulator(options, loc, /*reverse=*/false);
}

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createCudaEmulatorReversedTarget(const TargetOptions &options,
                                                                                       Location loc) {
  return createEmulator(options, loc, /*reverse=*/true);
}

//===- CudaTarget.cpp - NVIDIA GPUs as a target ---------------------------===//
#include "Target/Cuda/CudaTarget.h"

#include "Target/Cuda/CudaKernels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Regex.h"
#include "llvm/TargetParser/Triple.h"

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

// Whether LLVM's NVPTX backend knows `chip` ("sm_90").
bool knownChip(const std::string &chip) {
  static bool initialized = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)initialized;
  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  // Architecture-specific variants (sm_90a) run on one compute capability only; the kernels use
  // none of their instructions, so they are not offered.
  if (!target || !llvm::Regex("^sm_[0-9]+$").match(chip))
    return false;
  // Made for the default processor: one made for an unknown name would warn on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  return info && info->isCPUStringValid(chip);
}

// "sm_90" -> 90.
uint32_t computeCapability(llvm::StringRef chip) {
  uint32_t cc = 0;
  chip.drop_front(3).take_while(llvm::isDigit).getAsInteger(10, cc);
  return cc;
}

// What machine files call the processors this target's kernels run on.
constexpr const char *kProcessorKind = "cuda";

class CudaTarget final : public TargetBackend {
public:
  explicit CudaTarget(CudaPipelineOptions pipeline) : pipeline_(std::move(pipeline)) {
    description_.name = "cuda";
    description_.processorKind = kProcessorKind;
    description_.kernelFormat = ser::KernelFormat::CudaPtx;
    // Global memory: 256-byte alignment is what cuMemAlloc guarantees and what 128-bit
    // vector loads of any tensor need. The host does not address it (hostVisible = false).
    description_.memorySpaces.push_back({"device", 0, 256, false, true});
    // Kernels read a pad's source with clamped indices; no producer writes into a padded
    // tensor's interior.
    description_.padProducersInKernel = false;
    description_.maxRowsPackedInKernel = 0;
  }

  const TargetDescription &description() const override { return description_; }

  void buildKernelPipeline(OpPassManager &pm) const override {
    buildCudaOutliningPipeline(pm, pipeline_);
    buildCudaSerializationPipeline(pm, pipeline_);
  }

  FailureOr<ser::KernelLibrary> compileKernels(ModuleOp module) const override {
    FailureOr<OutlinedCudaKernels> outlined = outlineCudaKernels(module, pipeline_);
    if (failed(outlined))
      return failure();
    ser::KernelLibrary library;
    library.format = ser::KernelFormat::CudaPtx;
    library.compute_capability = computeCapability(pipeline_.chip);
    library.entries = std::move(outlined->entries);
    if (library.entries.empty())
      return library;
    ModuleOp kernelModule = *outlined->module;
    PassManager serialization(module.getContext());
    buildCudaSerializationPipeline(serialization, pipeline_);
    if (failed(serialization.run(kernelModule)))
      return module.emitError() << "generating PTX failed (see the errors above)";
    auto binary = kernelModule.lookupSymbol<gpu::BinaryOp>(kCudaKernelModuleName);
    if (!binary || binary.getObjects().size() != 1)
      return module.emitError() << "generating PTX produced no kernel object";
    llvm::StringRef ptx = cast<gpu::ObjectAttr>(binary.getObjects()[0]).getObject().getValue();
    while (ptx.ends_with(llvm::StringRef("\0", 1)))
      ptx = ptx.drop_back();
    // The driver loads the PTX alone: a call into libdevice or libc would fail at load time.
    llvm::SmallVector<llvm::StringRef> lines, imports;
    ptx.split(lines, '\n');
    for (llvm::StringRef line : lines)
      if (line.trim().starts_with(".extern"))
        imports.push_back(line.trim());
    if (!imports.empty())
      return module.emitError() << "the CUDA kernels import " << imports.size() << " symbol(s), e.g. '"
                                << imports.front() << "'; kernels must be self-contained";
    library.code.assign(ptx.begin(), ptx.end());
    return library;
  }

private:
  CudaPipelineOptions pipeline_;
  TargetDescription description_;
};

} // namespace

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createCudaTarget(const TargetOptions &options, Location loc) {
  CudaPipelineOptions pipeline;
  pipeline.chip = options.cudaArch;
  pipeline.allowTf32 = options.allowTf32;
  if (options.machine)
    pipeline.sharedMemoryBytes = kernelScratchBytes(*options.machine, kProcessorKind);
  if (!knownChip(pipeline.chip))
    return emitError(loc) << "unknown CUDA architecture '" << pipeline.chip
                          << "' (--cuda-arch takes names such as sm_80 or sm_90)";
  return std::unique_ptr<TargetBackend>(std::make_unique<CudaTarget>(std::move(pipeline)));
}

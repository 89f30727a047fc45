//===- HostTarget.cpp - the host CPU as a target --------------------------===//
#include "Target/Host/HostTarget.h"

#include "Target/Host/HostCodegen.h"
#include "Target/Host/Passes.h"

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

namespace {

class HostTarget final : public TargetBackend {
public:
  HostTarget(HostTargetOptions options, KernelPipelineOptions pipeline)
      : options_(std::move(options)), pipeline_(pipeline) {
    description_.name = "host";
    description_.kernelFormat = ser::KernelFormat::HostElf;
    // Host RAM: the CPU and its kernels see the same bytes; the 64-byte alignment is a cache
    // line and an AVX-512 vector.
    description_.memorySpaces.push_back({"host", 0, 64, true, true});
    description_.arenaSpace = 0;
  }

  const TargetDescription &description() const override { return description_; }

  void buildKernelPipeline(OpPassManager &pm) const override { buildHostKernelPipeline(pm, pipeline_); }

  FailureOr<ser::KernelLibrary> compileKernels(ModuleOp module) const override {
    SmallVector<KernelInfo> kernels;
    auto llvmModule = lowerKernelsToLLVMDialect(module, kernels, pipeline_);
    if (failed(llvmModule))
      return failure();
    auto object = emitHostObject(**llvmModule, kernels, options_);
    if (failed(object))
      return failure();
    auto sharedObject = linkSharedObject(object->object, module.getLoc(), options_);
    if (failed(sharedObject))
      return failure();
    ser::KernelLibrary library;
    library.format = ser::KernelFormat::HostElf;
    library.code = std::move(*sharedObject);
    library.cpu_features = object->cpuFeatures;
    for (const KernelInfo &k : kernels)
      library.entries.push_back({k.name, k.arity, k.workgroups, k.stackBytes, k.bindingBytes});
    return library;
  }

private:
  HostTargetOptions options_;
  KernelPipelineOptions pipeline_;
  TargetDescription description_;
};

} // namespace

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createHostTarget(const TargetOptions &options,
                                                                       Location loc) {
  HostTargetOptions host;
  host.cpu = options.cpu;
  host.linkerPath = options.linkerPath.empty() ? HEXIR_DEFAULT_LINKER : options.linkerPath;
  FailureOr<KernelPipelineOptions> pipeline = describeHostTarget(host, loc);
  if (failed(pipeline))
    return failure();
  return std::unique_ptr<TargetBackend>(std::make_unique<HostTarget>(std::move(host), *pipeline));
}

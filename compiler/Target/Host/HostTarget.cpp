//===- HostTarget.cpp - the host CPU as a target --------------------------===//
#include "Target/Host/HostTarget.h"

#include "Target/Host/HostCodegen.h"
#include "Target/Host/Passes.h"
#include "Transforms/KernelStrategy.h"

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
    description_.maxPanel = widestPanel(pipeline_.vectorBits);
  }

  const TargetDescription &description() const override { return description_; }

  void buildKernelPipeline(OpPassManager &pm) const override { buildHostKernelPipeline(pm, pipeline_); }

  FailureOr<ser::KernelLibrary> compileKernels(ModuleOp module) const override {
    SmallVector<KernelInfo> kernels;
    auto llvmModule = lowerKernelsToLLVMDialect(module, kernels, pipeline_);
    if (failed(llvmModule))
      return failure();
    return packageHostKernels(**llvmModule, kernels, options_, module.getLoc());
  }

private:
  HostTargetOptions options_;
  KernelPipelineOptions pipeline_;
  TargetDescription description_;
};

} // namespace

HostTargetOptions mlir::hexir::hostTargetOptions(const TargetOptions &options) {
  HostTargetOptions host;
  host.cpu = options.cpu;
  host.linkerPath = options.linkerPath.empty() ? HEXIR_DEFAULT_LINKER : options.linkerPath;
  host.inProcessLinker = options.linkerPath.empty();
  return host;
}

FailureOr<std::unique_ptr<TargetBackend>> mlir::hexir::createHostTarget(const TargetOptions &options,
                                                                       Location loc) {
  HostTargetOptions host = hostTargetOptions(options);
  FailureOr<KernelPipelineOptions> pipeline = describeHostTarget(host, loc);
  if (failed(pipeline))
    return failure();
  return std::unique_ptr<TargetBackend>(std::make_unique<HostTarget>(std::move(host), *pipeline));
}

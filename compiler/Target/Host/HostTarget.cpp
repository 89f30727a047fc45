//===- HostTarget.cpp - the host CPU as a target --------------------------===//
#include "Target/Host/HostTarget.h"

#include "Target/Host/HostCodegen.h"
#include "Target/Host/Passes.h"
#include "Target/Host/TileStrategy.h"

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
    description_.int8DotGroup = pipeline_.dotBits == pipeline_.vectorBits    ? 4
                                : pipeline_.pairBits == pipeline_.vectorBits ? 2
                                                                             : 0;
    description_.bf16DotGroups = pipeline_.bf16DotBits == pipeline_.vectorBits;
    description_.narrowingEpilogues = true;
    // A run-time B is packed inside its readers' kernels where each has at most 128 rows.
    // Measured on a Zen 3 with B an input (GEMM, of the FMA peak, packing kernel -> packed in
    // the matmul's kernel): 32x3072x768 0.59 -> 0.67, 64x768x768 0.77 -> 0.84, 64x3072x768
    // 0.68 -> 0.72, 128x3072x768 0.73 -> 0.75, 128x768x3072 0.80 -> 0.82; with more rows a
    // packing kernel costs little against the matmul, and blocks of rows would each pack B
    // again (256x1024x1024 0.82 -> 0.73, 512^3 0.91 -> 0.80).
    description_.maxRowsPackedInKernel = 128;
  }

  const TargetDescription &description() const override { return description_; }

  // An op roots a fusing kernel where the host's tile strategy has register tiles for it.
  bool fusesIntoKernel(linalg::LinalgOp op) const override {
    return chooseStrategy(op, f32Lanes(pipeline_.vectorBits)).has_value();
  }

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

//===- CudaKernels.cpp - the kernels of a graph as outlined CUDA kernels --===//
#include "Target/Cuda/CudaKernels.h"
#include "Dialect/Functions.h"
#include "Target/TargetBackend.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

FailureOr<OutlinedCudaKernels> mlir::hexir::outlineCudaKernels(ModuleOp module, const CudaPipelineOptions &options) {
  struct Kernel {
    std::string name;
    uint32_t arity;
    std::vector<uint64_t> bindingBytes;
  };
  std::vector<Kernel> kernels;
  OpBuilder b(module.getContext());
  OutlinedCudaKernels result;
  result.module = ModuleOp::create(b, module.getLoc());
  b.setInsertionPointToEnd(result.module->getBody());
  for (func::FuncOp fn : kernelFunctions(module)) {
    b.clone(*fn);
    FunctionType type = fn.getFunctionType();
    kernels.push_back({fn.getSymName().str(), type.getNumInputs() + type.getNumResults(), kernelBindingBytes(type)});
  }
  if (kernels.empty())
    return result;
  PassManager pm(module.getContext());
  buildCudaOutliningPipeline(pm, options);
  if (failed(pm.run(*result.module)))
    return module.emitError() << "compiling the kernels for CUDA failed (see the errors above)";
  auto gpuModule = result.module->lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModuleName);
  for (const Kernel &k : kernels)
    for (unsigned part = 0;; ++part) {
      std::string name = part == 0 ? k.name : k.name + "__" + std::to_string(part);
      auto fn = gpuModule ? gpuModule.lookupSymbol<gpu::GPUFuncOp>(name) : nullptr;
      if (!fn) {
        if (part == 0)
          return module.emitError() << "kernel '" << k.name << "' has no loop nest to launch";
        break;
      }
      ser::KernelEntry entry;
      entry.name = name;
      entry.arity = k.arity;
      entry.workgroups = static_cast<uint32_t>(fn->getAttrOfType<IntegerAttr>(kCudaWorkgroupsAttrName).getInt());
      auto threads = static_cast<uint32_t>(fn->getAttrOfType<IntegerAttr>(kCudaWorkgroupSizeAttrName).getInt());
      entry.workgroup_size = {threads, 1, 1};
      if (auto stack = fn->getAttrOfType<IntegerAttr>("hexir.stack_bytes"))
        entry.stack_bytes = static_cast<uint32_t>(stack.getInt());
      entry.binding_bytes = k.bindingBytes;
      result.entries.push_back(std::move(entry));
    }
  return result;
}

//===- LowerKernelsToLLVM.cpp - kernel functions to the LLVM dialect ------===//
#include "Target/Host/HostCodegen.h"
#include "Dialect/Functions.h"

#include "Dialect/HexirDialect.h"
#include "Target/Host/Passes.h"
#include "Target/TargetBackend.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::hexir;

FailureOr<OwningOpRef<ModuleOp>>
mlir::hexir::lowerKernelsToLLVMDialect(ModuleOp module, SmallVectorImpl<KernelInfo> &kernels,
                                       const KernelPipelineOptions &options) {
  OpBuilder b(module.getContext());
  OwningOpRef<ModuleOp> kernelModule = ModuleOp::create(b, module.getLoc());
  b.setInsertionPointToEnd(kernelModule->getBody());
  for (func::FuncOp fn : kernelFunctions(module)) {
    auto clone = cast<func::FuncOp>(b.clone(*fn));
    clone->removeAttr(kKernelAttrName);
    clone.setPublic();
    FunctionType type = fn.getFunctionType();
    // Results become trailing out-parameters; DistributeWorkgroups needs to know which.
    clone->setAttr("hexir.num_outputs", b.getI64IntegerAttr(type.getNumResults()));
    kernels.push_back({fn.getSymName().str(), type.getNumInputs() + type.getNumResults(), 1, 0,
                       kernelBindingBytes(type)});
  }
  PassManager pm(module.getContext());
  buildHostKernelPipeline(pm, options);
  if (failed(pm.run(*kernelModule)))
    return module.emitError() << "lowering the kernels to LLVM failed (see the errors above)";
  for (KernelInfo &k : kernels) {
    Operation *fn = kernelModule->lookupSymbol(k.name);
    if (auto wg = fn ? fn->getAttrOfType<IntegerAttr>(kWorkgroupsAttrName) : nullptr)
      k.workgroups = static_cast<unsigned>(wg.getInt());
    if (auto stack = fn ? fn->getAttrOfType<IntegerAttr>("hexir.stack_bytes") : nullptr)
      k.stackBytes = static_cast<unsigned>(stack.getInt());
  }
  return kernelModule;
}

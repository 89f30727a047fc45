//===- LowerKernelsToLLVM.cpp - kernel functions to the LLVM dialect ------===//
//
// The kernels are independent functions, so they are lowered in parts: each part is a
// builtin.module nested in the result, and the pass manager runs the kernel pipeline on the
// parts in parallel (its thread pool); emitHostObject then optimizes and emits each part as an
// object of its own, also in parallel. The parts depend only on the kernels (never on the
// number of threads), so the code generated is the same on every machine.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/HostCodegen.h"
#include "Dialect/Functions.h"

#include "Dialect/HexirDialect.h"
#include "Target/Host/Passes.h"
#include "Target/TargetBackend.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Parts of about this many kernels, and at most kMaxParts: enough parts that a few heavy
// kernels (a large convolution's O3) do not leave the other threads idle; few enough that each
// part's fixed cost (a TargetMachine, a module pipeline) stays small.
constexpr size_t kKernelsPerPart = 8;
constexpr size_t kMaxParts = 16;

// Kernel indices per part: the heaviest first, each into the lightest part so far (ties to the
// lower index), then in program order within a part.
SmallVector<SmallVector<size_t>> partition(ArrayRef<func::FuncOp> fns) {
  size_t parts = std::min(kMaxParts, std::max<size_t>(1, (fns.size() + kKernelsPerPart - 1) / kKernelsPerPart));
  SmallVector<size_t> weight(fns.size());
  for (size_t i = 0; i < fns.size(); ++i)
    fns[i]->walk([&](Operation *) { ++weight[i]; });
  SmallVector<size_t> order = llvm::to_vector(llvm::seq<size_t>(0, fns.size()));
  llvm::sort(order, [&](size_t a, size_t b) { return weight[a] != weight[b] ? weight[a] > weight[b] : a < b; });
  SmallVector<SmallVector<size_t>> result(parts);
  SmallVector<size_t> load(parts, 0);
  for (size_t i : order) {
    size_t lightest = std::min_element(load.begin(), load.end()) - load.begin();
    result[lightest].push_back(i);
    load[lightest] += weight[i];
  }
  for (SmallVector<size_t> &part : result)
    llvm::sort(part);
  return result;
}

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::hexir::lowerKernelsToLLVMDialect(ModuleOp module, SmallVectorImpl<KernelInfo> &kernels,
                                       const KernelPipelineOptions &options) {
  OpBuilder b(module.getContext());
  OwningOpRef<ModuleOp> kernelModule = ModuleOp::create(b, module.getLoc());
  SmallVector<func::FuncOp> fns = kernelFunctions(module);
  for (func::FuncOp fn : fns) {
    FunctionType type = fn.getFunctionType();
    kernels.push_back({fn.getSymName().str(), type.getNumInputs() + type.getNumResults(), 1, 0,
                       kernelBindingBytes(type)});
  }
  for (ArrayRef<size_t> part : partition(fns)) {
    b.setInsertionPointToEnd(kernelModule->getBody());
    auto partModule = ModuleOp::create(b, module.getLoc());
    b.setInsertionPointToEnd(partModule.getBody());
    for (size_t i : part) {
      auto clone = cast<func::FuncOp>(b.clone(*fns[i]));
      clone->removeAttr(kKernelAttrName);
      clone.setPublic();
      // Results become trailing out-parameters; DistributeWorkgroups needs to know which.
      clone->setAttr("hexir.num_outputs", b.getI64IntegerAttr(fns[i].getFunctionType().getNumResults()));
    }
  }
  PassManager pm(module.getContext());
  buildHostKernelPipeline(pm.nest<ModuleOp>(), options);
  if (failed(pm.run(*kernelModule)))
    return module.emitError() << "lowering the kernels to LLVM failed (see the errors above)";
  llvm::StringMap<Operation *> lowered;
  kernelModule->walk([&](LLVM::LLVMFuncOp fn) { lowered[fn.getSymName()] = fn; });
  for (KernelInfo &k : kernels) {
    Operation *fn = lowered.lookup(k.name);
    if (auto wg = fn ? fn->getAttrOfType<IntegerAttr>(kWorkgroupsAttrName) : nullptr)
      k.workgroups = static_cast<unsigned>(wg.getInt());
    if (auto stack = fn ? fn->getAttrOfType<IntegerAttr>("hexir.stack_bytes") : nullptr)
      k.stackBytes = static_cast<unsigned>(stack.getInt());
  }
  return kernelModule;
}

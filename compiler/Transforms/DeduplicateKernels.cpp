//===- DeduplicateKernels.cpp - one kernel per distinct computation -------===//
//
// Deep models repeat a block per stage, and dispatch formation outlines each repetition into
// its own kernel function: ConvNeXt-base has 160 dispatches but 29 different kernels. Every
// kernel pipeline (tiling, bufferization, LLVM's O3 and code generation) then runs 5 times
// more often than it needs to, which was most of such a model's compile time. Kernels that
// differ only in their names and locations are one kernel: the first of each group stays,
// the calls of the others are redirected to it.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "Dialect/DispatchNames.h"
#include "Dialect/Functions.h"

#include "mlir/IR/OperationSupport.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_DEDUPLICATEKERNELS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// A kernel's attributes without its name: its type, argument and result attributes and
// discardable attributes (uniqued, so equal dictionaries are one pointer).
DictionaryAttr attributesWithoutName(func::FuncOp fn) {
  NamedAttrList attrs(fn->getAttrDictionary());
  attrs.erase(fn.getSymNameAttrName());
  return attrs.getDictionary(fn.getContext());
}

llvm::hash_code structuralHash(func::FuncOp fn) {
  llvm::hash_code hash = llvm::hash_value(attributesWithoutName(fn).getAsOpaquePointer());
  fn.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(hash, OperationEquivalence::computeHash(op, OperationEquivalence::ignoreHashValue,
                                                                      OperationEquivalence::ignoreHashValue,
                                                                      OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool sameKernel(func::FuncOp a, func::FuncOp b) {
  return attributesWithoutName(a) == attributesWithoutName(b) &&
         OperationEquivalence::isRegionEquivalentTo(&a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct DeduplicateKernelsPass : public mlir::hexir::impl::DeduplicateKernelsBase<DeduplicateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Groups by hash; within a group, the first kernel equal to a newcomer represents it.
    llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> byHash;
    llvm::DenseMap<StringAttr, func::FuncOp> representative;
    SmallVector<func::FuncOp> duplicates;
    for (func::FuncOp fn : kernelFunctions(module)) {
      SmallVector<func::FuncOp, 1> &candidates = byHash[structuralHash(fn)];
      auto same = llvm::find_if(candidates, [&](func::FuncOp other) { return sameKernel(fn, other); });
      if (same == candidates.end())
        candidates.push_back(fn);
      else {
        representative[fn.getSymNameAttr()] = *same;
        duplicates.push_back(fn);
      }
    }
    if (representative.empty())
      return;
    Builder b(&getContext());
    module.walk([&](CallTirOp call) {
      auto it = representative.find(call.getCalleeAttr().getAttr());
      if (it == representative.end())
        return;
      // What the call reports comes from the kernel it had (sourceNames reads its body).
      if (!call->hasAttr(kDispatchNameAttrName))
        call->setAttr(kDispatchNameAttrName, call.getCalleeAttr().getAttr());
      if (!call->hasAttr(kSourcesAttrName)) {
        SmallVector<Attribute> sources;
        for (const std::string &name : sourceNames(call))
          sources.push_back(b.getStringAttr(name));
        call->setAttr(kSourcesAttrName, b.getArrayAttr(sources));
      }
      call.setCalleeAttr(FlatSymbolRefAttr::get(it->second.getSymNameAttr()));
    });
    for (func::FuncOp fn : duplicates)
      fn.erase();
  }
};

} // namespace

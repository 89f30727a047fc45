//===- CheckKernelStack.cpp - kernels use a bounded, static stack frame ---===//
//
// Kernels never allocate on the heap; their temporaries are stack buffers of static size. A
// buffer allocated inside a loop must be released every iteration (an alloca scope inside the
// loop, as vector-to-scf emits): otherwise it is allocated again on every iteration and
// overflows the thread's stack on a large tensor. All of a kernel's stack buffers together
// must fit in 64 KiB (worker threads have small stacks). Anything else is a compiler bug,
// reported here at compile time instead of crashing at run time.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_CHECKKERNELSTACK
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

struct CheckKernelStackPass : public mlir::hexir::impl::CheckKernelStackBase<CheckKernelStackPass> {
  using CheckKernelStackBase::CheckKernelStackBase;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      auto bug = [&](const Twine &what) {
        fn.emitError() << "kernel '" << fn.getSymName() << "' " << what << " (a compiler bug, please report it)";
        signalPassFailure();
      };
      int64_t bytes = 0;
      const DataLayout &layout = DataLayout::closest(fn);
      WalkResult result = fn.walk([&](Operation *op) {
        if (isa<memref::AllocOp>(op)) {
          bug("allocates heap memory");
          return WalkResult::interrupt();
        }
        auto alloca = dyn_cast<memref::AllocaOp>(op);
        if (!alloca)
          return WalkResult::advance();
        MemRefType type = alloca.getType();
        if (!type.hasStaticShape()) {
          bug("allocates a dynamic amount of stack memory");
          return WalkResult::interrupt();
        }
        auto loop = alloca->getParentOfType<LoopLikeOpInterface>();
        auto scope = alloca->getParentOfType<memref::AllocaScopeOp>();
        if (loop && !(scope && loop->isProperAncestor(scope))) {
          bug("allocates stack memory inside a loop without releasing it");
          return WalkResult::interrupt();
        }
        bytes += type.getNumElements() * static_cast<int64_t>(layout.getTypeSize(type.getElementType()).getFixedValue());
        return WalkResult::advance();
      });
      if (result.wasInterrupted())
        return;
      if (bytes > maxStackBytes)
        return bug("needs " + Twine(bytes) + " bytes of stack buffers, more than " + Twine(maxStackBytes));
      fn->setAttr("hexir.stack_bytes", IntegerAttr::get(IntegerType::get(&getContext(), 64), bytes));
    }
  }
};

} // namespace

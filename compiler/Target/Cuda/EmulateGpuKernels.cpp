//===- EmulateGpuKernels.cpp - CUDA kernels as host loops -----------------===//
#include "Target/Cuda/Passes.h"
#include "Target/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_EMULATEGPUKERNELS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

struct EmulateGpuKernelsPass : public mlir::hexir::impl::EmulateGpuKernelsBase<EmulateGpuKernelsPass> {
  using EmulateGpuKernelsBase::EmulateGpuKernelsBase;

  // The index a loop over [lb, ub) gives at iteration `iv`: iv itself, or lb + ub - 1 - iv.
  Value ordered(OpBuilder &b, Location loc, Value iv, Value lb, Value ub) {
    if (!reverse)
      return iv;
    Value last = arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, lb, ub),
                                       arith::ConstantIndexOp::create(b, loc, 1));
    return arith::SubIOp::create(b, loc, last, iv);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModuleName);
    if (!gpuModule)
      return;
    OpBuilder b(module.getContext());
    for (auto gfn : gpuModule.getOps<gpu::GPUFuncOp>()) {
      auto blocks = gfn->getAttrOfType<IntegerAttr>(kCudaWorkgroupsAttrName);
      auto threads = gfn->getAttrOfType<IntegerAttr>(kCudaWorkgroupSizeAttrName);
      if (!blocks || !threads) {
        gfn.emitError("a CUDA kernel without its launch shape");
        return signalPassFailure();
      }
      Location loc = gfn.getLoc();
      b.setInsertionPointToEnd(module.getBody());
      auto fn = func::FuncOp::create(b, loc, gfn.getName(), gfn.getFunctionType());
      fn->setAttr(kWorkgroupsAttrName, blocks);
      Block *entry = fn.addEntryBlock();
      b.setInsertionPointToStart(entry);
      IRMapping map;
      for (auto [from, to] : llvm::zip(gfn.getArguments(), fn.getArguments()))
        map.map(from, to);
      // A thread's temporaries: one frame, reused by every emulated thread.
      Block &body = gfn.getBody().front();
      for (auto alloca : body.getOps<memref::AllocaOp>())
        b.clone(*alloca, map);
      auto range = WorkgroupRangeOp::create(b, loc, b.getIndexType(), b.getIndexType());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
      auto blockLoop = scf::ForOp::create(b, loc, range.getBegin(), range.getEnd(), one);
      b.setInsertionPointToStart(blockLoop.getBody());
      Value blockId = ordered(b, loc, blockLoop.getInductionVar(), range.getBegin(), range.getEnd());
      Value threadCount = arith::ConstantIndexOp::create(b, loc, threads.getInt());
      auto threadLoop = scf::ForOp::create(b, loc, zero, threadCount, one);
      b.setInsertionPointToStart(threadLoop.getBody());
      Value threadId = ordered(b, loc, threadLoop.getInductionVar(), zero, threadCount);
      for (Operation &op : body.without_terminator()) {
        if (isa<memref::AllocaOp>(op))
          continue;
        if (auto id = dyn_cast<gpu::BlockIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
          map.map(id.getResult(), blockId);
        } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
          map.map(id.getResult(), threadId);
        } else if (isa<gpu::GPUDialect>(op.getDialect())) {
          op.emitError("the CUDA emulator does not model '") << op.getName() << "'";
          return signalPassFailure();
        } else {
          Operation *copy = b.clone(op, map);
          // The 16-byte alignment of a vectorized kernel's accesses holds for device memory (every
          // binding 64-byte aligned); a host caller's tensor may be bound where it is, aligned to
          // its elements only.
          copy->walk([](Operation *inner) {
            if (isa<vector::LoadOp, vector::StoreOp>(inner))
              inner->removeAttr("alignment");
          });
        }
      }
      b.setInsertionPointToEnd(entry);
      func::ReturnOp::create(b, loc);
    }
    gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace

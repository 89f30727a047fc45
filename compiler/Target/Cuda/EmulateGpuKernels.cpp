//===- EmulateGpuKernels.cpp - CUDA kernels as host loops -----------------===//
#include "Target/Cuda/Passes.h"
#include "Target/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

  // The frame of one call (`body`'s allocas, which every emulated thread and block reuses),
  // then the loop over the call's blocks (a host workgroup range); the builder is left inside
  // it. Returns the block index.
  Value beginBlockLoop(OpBuilder &b, Location loc, Block &body, IRMapping &map) {
    for (auto alloca : body.getOps<memref::AllocaOp>())
      b.clone(*alloca, map);
    auto range = WorkgroupRangeOp::create(b, loc, b.getIndexType(), b.getIndexType());
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blockLoop = scf::ForOp::create(b, loc, range.getBegin(), range.getEnd(), one);
    b.setInsertionPointToStart(blockLoop.getBody());
    return ordered(b, loc, blockLoop.getInductionVar(), range.getBegin(), range.getEnd());
  }

  // The kernel's code (its allocas already cloned) at the builder, with the block and thread
  // indices given. A staged kernel's barriers come along (emulateStaged removes them); any
  // other GPU op is an error. The 16-byte alignment of a vectorized kernel's accesses holds for
  // device memory (every binding 64-byte aligned); a host caller's tensor may be bound where it
  // is, aligned to its elements only.
  LogicalResult cloneBody(OpBuilder &b, Block &body, IRMapping &map, Value blockId, Value threadId, bool staged) {
    for (Operation &op : body.without_terminator()) {
      if (isa<memref::AllocaOp>(op))
        continue;
      if (auto id = dyn_cast<gpu::BlockIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
        map.map(id.getResult(), blockId);
      } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
        map.map(id.getResult(), threadId);
      } else if (!staged && isa<gpu::GPUDialect>(op.getDialect())) {
        return op.emitError("the CUDA emulator does not model '") << op.getName() << "'";
      } else {
        b.clone(op, map)->walk([](Operation *inner) {
          if (isa<vector::LoadOp, vector::StoreOp>(inner))
            inner->removeAttr("alignment");
        });
      }
    }
    return success();
  }

  // A staged kernel (StageContractions) runs its threads loop by loop: each thread loop (from
  // the thread index, in steps of the block size, a barrier after it) becomes one loop over
  // all of its iterations, run by the emulated block, and the code around the thread loops,
  // the same for every thread, runs once per block. Everything that crosses a barrier is in
  // shared memory (the block's own allocas here), so this computes what the GPU computes.
  LogicalResult emulateStaged(OpBuilder &b, gpu::GPUFuncOp gfn, func::FuncOp fn, IRMapping &map, int64_t threads) {
    Location loc = gfn.getLoc();
    bool misplaced = false;
    gfn.walk([&](gpu::ThreadIdOp id) {
      for (Operation *user : id->getUsers()) {
        auto loop = dyn_cast<scf::ForOp>(user);
        misplaced |= !loop || !loop->hasAttr(kCudaThreadLoopAttrName) || loop.getLowerBound() != id.getResult() ||
                     getConstantIntValue(loop.getStep()) != threads;
      }
    });
    if (misplaced)
      return gfn.emitError("the CUDA emulator runs staged kernels whose thread index only starts thread loops");
    Block &body = gfn.getBody().front();
    auto stripped = [](Type type) -> Type {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
        return type;
      return MemRefType::Builder(memref).setMemorySpace(Attribute());
    };
    // Shared memory: the block's, one frame reused by the blocks this call runs in turn.
    for (BlockArgument shared : gfn.getWorkgroupAttributions())
      map.map(shared, memref::AllocaOp::create(b, loc, cast<MemRefType>(stripped(shared.getType()))));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value blockId = beginBlockLoop(b, loc, body, map);
    // The first thread's start: each thread loop then runs all of its iterations.
    (void)cloneBody(b, body, map, blockId, zero, /*staged=*/true);
    b.setInsertionPointToEnd(&fn.getBody().front());
    func::ReturnOp::create(b, loc);
    // Every iteration of a thread loop, in order (or reversed), then what the barrier guards.
    SmallVector<scf::ForOp> threadLoops;
    SmallVector<Operation *> barriers;
    bool unmodeled = false;
    fn.walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop->hasAttr(kCudaThreadLoopAttrName)) {
        threadLoops.push_back(loop);
      } else if (isa<gpu::BarrierOp>(op)) {
        barriers.push_back(op);
      } else if (isa<gpu::GPUDialect>(op->getDialect())) {
        op->emitError("the CUDA emulator does not model '") << op->getName() << "' in a staged kernel";
        unmodeled = true;
      }
    });
    for (Operation *barrier : barriers)
      barrier->erase();
    for (scf::ForOp loop : threadLoops) {
      OpBuilder inner(loop);
      loop.getStepMutable().assign(arith::ConstantIndexOp::create(inner, loc, 1));
      loop->removeAttr(kCudaThreadLoopAttrName);
      if (!reverse)
        continue;
      inner.setInsertionPointToStart(loop.getBody());
      Value iv = loop.getInductionVar();
      Value index = ordered(inner, loc, iv, loop.getLowerBound(), loop.getUpperBound());
      iv.replaceAllUsesExcept(index, index.getDefiningOp());
    }
    fn.walk([&](Operation *op) {
      for (Value v : op->getResults())
        v.setType(stripped(v.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(stripped(arg.getType()));
    });
    return failure(unmodeled);
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
      Block &body = gfn.getBody().front();
      if (gfn->hasAttr(kCudaStagedAttrName)) {
        if (failed(emulateStaged(b, gfn, fn, map, threads.getInt())))
          return signalPassFailure();
        continue;
      }
      // A thread's temporaries: one frame, reused by every emulated thread.
      Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
      Value blockId = beginBlockLoop(b, loc, body, map);
      Value threadCount = arith::ConstantIndexOp::create(b, loc, threads.getInt());
      auto threadLoop = scf::ForOp::create(b, loc, zero, threadCount, one);
      b.setInsertionPointToStart(threadLoop.getBody());
      Value threadId = ordered(b, loc, threadLoop.getInductionVar(), zero, threadCount);
      if (failed(cloneBody(b, body, map, blockId, threadId, /*staged=*/false)))
        return signalPassFailure();
      b.setInsertionPointToEnd(entry);
      func::ReturnOp::create(b, loc);
    }
    gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace

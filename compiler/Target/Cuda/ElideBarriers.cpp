//===- ElideBarriers.cpp - barriers a staged kernel does not need ---------===//
#include "Target/Cuda/ElideBarriers.h"

#include "Target/Cuda/Passes.h"
#include "Target/Cuda/ThreadPrivate.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// What a sequence of thread loops reads and writes: shared buffers by their attribution,
// global memory as one (a null Value). `unknown`: an access this cannot place, which
// conflicts with everything.
struct Accesses {
  llvm::SmallDenseSet<Value> reads, writes;
  bool unknown = false;

  void add(const Accesses &o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
    unknown |= o.unknown;
  }
  bool empty() const { return reads.empty() && writes.empty() && !unknown; }
  bool conflicts(const Accesses &o) const {
    if (unknown || o.unknown)
      return true;
    auto meets = [](const llvm::SmallDenseSet<Value> &a, const llvm::SmallDenseSet<Value> &b) {
      return llvm::any_of(a, [&](Value v) { return b.contains(v); });
    };
    return meets(writes, o.reads) || meets(writes, o.writes) || meets(reads, o.writes);
  }
};

// The buffer `v` views: a workgroup attribution, global memory (null), or a private tile.
enum class Place { kShared, kGlobal, kPrivate, kUnknown };
std::pair<Place, Value> placeOf(gpu::GPUFuncOp gfn, Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  if (auto alloca = v.getDefiningOp<memref::AllocaOp>())
    return {alloca->hasAttr(kCudaThreadPrivateAttrName) ? Place::kPrivate : Place::kUnknown, v};
  if (llvm::is_contained(gfn.getWorkgroupAttributions(), v))
    return {Place::kShared, v};
  if (llvm::is_contained(gfn.getArguments(), v))
    return {Place::kGlobal, Value()};
  return {Place::kUnknown, v};
}

Accesses accessesOf(gpu::GPUFuncOp gfn, Operation *loop) {
  Accesses a;
  auto note = [&](Value buffer, bool write) {
    auto [place, key] = placeOf(gfn, buffer);
    if (place == Place::kPrivate)
      return;
    if (place == Place::kUnknown) {
      a.unknown = true;
      return;
    }
    (write ? a.writes : a.reads).insert(key);
  };
  loop->walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      for (Value in : linalgOp.getDpsInputs())
        if (isa<MemRefType>(in.getType()))
          note(in, false);
      for (Value out : linalgOp.getDpsInits()) {
        note(out, true);
        note(out, false);
      }
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      note(copy.getSource(), false);
      note(copy.getTarget(), true);
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      note(load.getMemRef(), false);
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      note(store.getMemRef(), true);
    } else if (auto load = dyn_cast<vector::LoadOp>(op)) {
      note(load.getBase(), false);
    } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
      note(store.getBase(), true);
    } else if (isa<ViewLikeOpInterface>(op) || isMemoryEffectFree(op) || op->hasTrait<OpTrait::IsTerminator>() ||
               isa<scf::ForOp, scf::IfOp, linalg::YieldOp, gpu::BarrierOp, memref::AllocaOp>(op)) {
      return;
    } else {
      a.unknown = true;  // an op with effects this does not know: keep every barrier around it
    }
  });
  return a;
}

bool isThreadLoop(Operation *op) { return op->hasAttr(kCudaThreadLoopAttrName); }

// The next thread loop after `barrier` in its block with nothing but effect-free ops (views,
// indices) between; null where there is none.
Operation *nextThreadLoop(Operation *barrier) {
  for (Operation *op = barrier->getNextNode(); op; op = op->getNextNode()) {
    if (isThreadLoop(op))
      return op;
    if (!isMemoryEffectFree(op) || op->getNumRegions() > 0)
      return nullptr;
  }
  return nullptr;
}

// Whether nothing but effect-free ops and the return follow `barrier` in the kernel's body.
bool endsKernel(gpu::GPUFuncOp gfn, Operation *barrier) {
  if (barrier->getBlock() != &gfn.getBody().front())
    return false;
  for (Operation *op = barrier->getNextNode(); op; op = op->getNextNode())
    if (!isa<gpu::ReturnOp>(op) && (!isMemoryEffectFree(op) || op->getNumRegions() > 0))
      return false;
  return true;
}

} // namespace

int64_t mlir::hexir::elideBarriers(gpu::GPUFuncOp gfn) {
  SmallVector<Block *> blocks;
  gfn.walk([&](Block *block) {
    if (llvm::any_of(*block, [](Operation &op) { return isThreadLoop(&op); }))
      blocks.push_back(block);
  });
  SmallVector<Operation *> needless;
  for (Block *block : blocks) {
    Accesses pending;  // since the last barrier kept, in this block
    for (Operation &op : *block) {
      if (!isThreadLoop(&op)) {
        // A loop of steps: what it does counts as not yet ordered (its last barrier usually is).
        if (!isa<gpu::BarrierOp>(op) && (op.getNumRegions() > 0 || !isMemoryEffectFree(&op)))
          pending.add(accessesOf(gfn, &op));
        continue;
      }
      auto barrier = dyn_cast_or_null<gpu::BarrierOp>(op.getNextNode());
      if (!barrier)
        continue;
      Accesses since = pending;
      since.add(accessesOf(gfn, &op));
      bool needed;
      if (Operation *next = nextThreadLoop(barrier))
        needed = since.conflicts(accessesOf(gfn, next));
      else
        needed = !since.empty() && !endsKernel(gfn, barrier);
      if (needed) {
        pending = Accesses{};
        continue;
      }
      needless.push_back(barrier);
      pending = std::move(since);
    }
  }
  for (Operation *barrier : needless)
    barrier->erase();
  return static_cast<int64_t>(needless.size());
}

//===- PipelineCopies.cpp - a staged kernel's next tiles copied during this step -===//
#include "Target/Cuda/PipelineCopies.h"

#include "Target/Cuda/Passes.h"
#include "Target/Cuda/ViewRetarget.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

bool isThreadLoop(Operation *op) { return op->hasAttr(kCudaThreadLoopAttrName); }

Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool isBinding(gpu::GPUFuncOp gfn, Value v) { return llvm::is_contained(gfn.getArguments(), v); }

BlockArgument sharedBuffer(gpu::GPUFuncOp gfn, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && llvm::is_contained(gfn.getWorkgroupAttributions(), arg) ? arg : BlockArgument();
}

// The shared buffer `loop` fills: its one effect is a linalg.copy from a view of a binding to a
// view of that buffer. Null for any other loop.
BlockArgument copyTarget(gpu::GPUFuncOp gfn, scf::ForOp loop) {
  BlockArgument target;
  int copies = 0;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
      BlockArgument dst = sharedBuffer(gfn, rootOf(copy.getOutputs()[0]));
      if (!dst || !isBinding(gfn, rootOf(copy.getInputs()[0])))
        return WalkResult::interrupt();
      target = dst;
      ++copies;
      return WalkResult::advance();
    }
    if (op->getParentOfType<linalg::CopyOp>() || isMemoryEffectFree(op) || op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return walk.wasInterrupted() || copies != 1 ? BlockArgument() : target;
}

// Whether every use of `v` (through views) only reads it.
bool onlyRead(Value v, int depth = 0) {
  if (depth > 8)
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto sub = dyn_cast<memref::SubViewOp>(user)) {
      if (!onlyRead(sub.getResult(), depth + 1))
        return false;
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
      if (!linalgOp.isDpsInput(&use))
        return false;
    } else if (!isa<memref::LoadOp, vector::LoadOp>(user)) {
      return false;
    }
  }
  return true;
}

// A view of slot `slot` of `buffer` (2 x the tile), of the tile's shape.
Value slotView(OpBuilder &b, Location loc, Value buffer, Value slot) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets{slot}, sizes{b.getIndexAttr(1)}, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t extent : type.getShape().drop_front()) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(extent));
  }
  auto viewType = memref::SubViewOp::inferRankReducedResultType(type.getShape().drop_front(), type, offsets, sizes,
                                                                strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), buffer, offsets, sizes, strides);
}

int64_t bytesOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

bool pipelineLoop(RewriterBase &rewriter, gpu::GPUFuncOp gfn, scf::ForOp step, int64_t sharedLimit) {
  std::optional<int64_t> lb = getConstantIntValue(step.getLowerBound()),
                         ub = getConstantIntValue(step.getUpperBound()), st = getConstantIntValue(step.getStep());
  if (!lb || !ub || !st || *st <= 0 || (*ub - *lb) / *st < 2 || step.getNumRegionIterArgs() != 0)
    return false;
  Block *body = step.getBody();
  // The copies of the step's tiles: thread loops before its first barrier, among views.
  SmallVector<Operation *> prefix;
  SmallVector<scf::ForOp> copies;
  SmallVector<BlockArgument> targets;
  Operation *barrier = nullptr;
  for (Operation &op : body->without_terminator()) {
    if (isa<gpu::BarrierOp>(op)) {
      barrier = &op;
      break;
    }
    if (isThreadLoop(&op)) {
      BlockArgument target = copyTarget(gfn, cast<scf::ForOp>(op));
      if (!target || llvm::is_contained(targets, target))
        return false;
      copies.push_back(cast<scf::ForOp>(op));
      targets.push_back(target);
    } else if (!isMemoryEffectFree(&op) || op.getNumRegions() > 0) {
      return false;
    }
    prefix.push_back(&op);
  }
  Operation *last = body->getTerminator()->getPrevNode();
  if (!barrier || copies.empty() || !last || !isa<gpu::BarrierOp>(last))
    return false;
  // Each tile: used in this loop only, written by its copy only.
  for (BlockArgument target : targets)
    for (OpOperand &use : target.getUses()) {
      Operation *user = use.getOwner();
      if (!step->isProperAncestor(user))
        return false;
      bool inCopy = llvm::any_of(copies, [&](scf::ForOp loop) { return loop->isProperAncestor(user); });
      if (!inCopy && !(isa<memref::SubViewOp>(user) && onlyRead(user->getResult(0))))
        return false;
    }

  int64_t shared = 0;
  for (BlockArgument buffer : gfn.getWorkgroupAttributions())
    shared += bytesOf(buffer);
  for (BlockArgument target : targets)
    shared += bytesOf(target);  // the second slot
  if (shared > sharedLimit)
    return false;

  Location loc = step.getLoc();
  Value iv = step.getInductionVar();
  // The prologue: step 0's copies, before the loop.
  rewriter.setInsertionPoint(step);
  IRMapping first;
  first.map(iv, step.getLowerBound());
  SmallVector<Operation *> prologue;
  for (Operation *op : prefix)
    prologue.push_back(rewriter.clone(*op, first));
  NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
  // In the loop: this step's slot and the next one's; the next step's copies, if any.
  rewriter.setInsertionPointToStart(body);
  Value two = arith::ConstantIndexOp::create(rewriter, loc, 2);
  Value index = arith::DivUIOp::create(rewriter, loc, arith::SubIOp::create(rewriter, loc, iv, step.getLowerBound()),
                                       step.getStep());
  Value current = arith::RemUIOp::create(rewriter, loc, index, two);
  Value next = arith::RemUIOp::create(
      rewriter, loc, arith::AddIOp::create(rewriter, loc, index, arith::ConstantIndexOp::create(rewriter, loc, 1)), two);
  rewriter.setInsertionPoint(barrier);
  Value following = arith::AddIOp::create(rewriter, loc, iv, step.getStep());
  Value more = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, following, step.getUpperBound());
  auto ahead = scf::IfOp::create(rewriter, loc, more, /*withElseRegion=*/false);
  rewriter.setInsertionPoint(ahead.thenBlock()->getTerminator());
  IRMapping then;
  then.map(iv, following);
  for (Operation *op : prefix)
    rewriter.clone(*op, then);
  rewriter.setInsertionPoint(barrier);
  // An empty group where there was no next step: waiting for all but the newest then still
  // waits for this step's.
  NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
  NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, rewriter.getI32IntegerAttr(1));
  for (scf::ForOp loop : copies)
    rewriter.eraseOp(loop);

  // Two slots per tile; each use takes its slot: the prologue's 0, the next step's copies the
  // next, the rest this step's.
  for (BlockArgument target : targets) {
    auto type = cast<MemRefType>(target.getType());
    SmallVector<int64_t> shape{2};
    llvm::append_range(shape, type.getShape());
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : target.getUses())
      uses.push_back(&use);
    target.setType(MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(), type.getMemorySpace()));
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      rewriter.setInsertionPoint(user);
      Value slot;
      if (llvm::any_of(prologue, [&](Operation *op) { return op == user || op->isProperAncestor(user); }))
        slot = arith::ConstantIndexOp::create(rewriter, loc, 0);
      else if (ahead->isProperAncestor(user))
        slot = next;
      else
        slot = current;
      retargetUse(rewriter, *use, slotView(rewriter, loc, target, slot));
    }
  }
  // The copies' loops (their clones) are to be asynchronous.
  for (Operation *op : prologue)
    if (isThreadLoop(op))
      op->setAttr(kCudaAsyncCopyAttrName, rewriter.getUnitAttr());
  for (Operation &op : *ahead.thenBlock())
    if (isThreadLoop(&op))
      op.setAttr(kCudaAsyncCopyAttrName, rewriter.getUnitAttr());
  return true;
}

} // namespace

int64_t mlir::hexir::pipelineCopies(RewriterBase &rewriter, gpu::GPUFuncOp gfn, int64_t sharedLimit) {
  SmallVector<scf::ForOp> steps;
  for (auto loop : gfn.getBody().front().getOps<scf::ForOp>())
    if (!isThreadLoop(loop))
      steps.push_back(loop);
  int64_t pipelined = 0;
  for (scf::ForOp step : steps)
    pipelined += pipelineLoop(rewriter, gfn, step, sharedLimit);
  return pipelined;
}

LogicalResult mlir::hexir::makeCopiesAsync(RewriterBase &rewriter, gpu::GPUFuncOp gfn) {
  SmallVector<Operation *> stores;
  gfn.walk([&](Operation *op) {
    if (!isa<vector::StoreOp, memref::StoreOp>(op))
      return;
    for (Operation *p = op->getParentOp(); p && p != gfn.getOperation(); p = p->getParentOp())
      if (p->hasAttr(kCudaAsyncCopyAttrName)) {
        stores.push_back(op);
        return;
      }
  });
  for (Operation *store : stores) {
    Value value = store->getOperand(0), dst = store->getOperand(1);
    Operation *load = value.getDefiningOp();
    if (!load || !value.hasOneUse() || !isa<vector::LoadOp, memref::LoadOp>(load))
      continue;
    Value src = load->getOperand(0);
    if (!sharedBuffer(gfn, rootOf(dst)) || !isBinding(gfn, rootOf(src)))
      continue;
    int64_t elements = 1;
    if (auto vector = dyn_cast<VectorType>(value.getType())) {
      if (vector.getRank() != 1)
        continue;
      elements = vector.getNumElements();
    }
    int64_t bytes = elements * ((getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() + 7) / 8);
    if (bytes != 4 && bytes != 8 && bytes != 16)
      continue;
    rewriter.setInsertionPoint(store);
    nvgpu::DeviceAsyncCopyOp::create(rewriter, store->getLoc(), dst, store->getOperands().drop_front(2), src,
                                     load->getOperands().drop_front(1), rewriter.getIndexAttr(elements),
                                     /*srcElements=*/Value(), bytes == 16 ? rewriter.getUnitAttr() : UnitAttr());
    rewriter.eraseOp(store);
    rewriter.eraseOp(load);
  }
  return success();
}

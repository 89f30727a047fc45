//===- ThreadPrivate.cpp - a block's shared tiles kept per thread ---------===//
#include "Target/Cuda/ThreadPrivate.h"

#include "Target/Cuda/ViewRetarget.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Where a thread forall's iteration puts a view of the buffer: the forall's static bounds
// and, per dimension of the buffer, the induction variable giving its offset (-1: the whole
// dimension from 0), and the view's sizes. Two loops with equal signatures give each
// iteration (each thread) the same tile.
struct TileSignature {
  SmallVector<int64_t> lbs, ubs, steps;
  SmallVector<int64_t> ivOfDim;
  SmallVector<int64_t> sizes;
  SmallVector<int64_t> shape;  // the view's result (rank-reduced where it is)
  bool operator==(const TileSignature &o) const {
    return lbs == o.lbs && ubs == o.ubs && steps == o.steps && ivOfDim == o.ivOfDim && sizes == o.sizes &&
           shape == o.shape;
  }
};

// Whether every user of `view` (and of views of it) can take a buffer of another layout in
// its place: the ops that lowering to loops turns into loads and stores.
bool retypable(Value view, int depth = 0) {
  if (depth > 8)
    return false;
  for (Operation *user : view.getUsers()) {
    if (auto sub = dyn_cast<memref::SubViewOp>(user)) {
      if (sub.getSource() != view || !retypable(sub.getResult(), depth + 1))
        return false;
      continue;
    }
    if (!isa<linalg::LinalgOp, memref::LoadOp, memref::StoreOp, memref::CopyOp, vector::TransferReadOp,
             vector::TransferWriteOp>(user))
      return false;
  }
  return true;
}

// The signature of `view`, a view of a buffer of `shape` in a thread forall; nullopt where it
// is not a tile of that forall's own (see privatizeThreadTiles).
std::optional<TileSignature> signatureOf(memref::SubViewOp view, ArrayRef<int64_t> shape, int64_t threads) {
  auto forall = dyn_cast<scf::ForallOp>(view->getParentOp());
  if (!forall || !isThreadForall(forall) || !retypable(view.getResult()))
    return std::nullopt;
  TileSignature s;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(), forall.getMixedStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub), st = getConstantIntValue(step);
    if (!l || !u || !st || *l != 0 || *st <= 0 || *u % *st != 0)
      return std::nullopt;
    s.lbs.push_back(*l);
    s.ubs.push_back(*u);
    s.steps.push_back(*st);
  }
  int64_t trips = 1;
  for (auto [u, st] : llvm::zip(s.ubs, s.steps))
    trips *= u / st;
  if (trips > threads)
    return std::nullopt;  // a thread would run several iterations, several tiles
  SmallVector<bool> used(forall.getRank(), false);
  for (auto [d, offset, size, stride] :
       llvm::enumerate(view.getMixedOffsets(), view.getMixedSizes(), view.getMixedStrides())) {
    std::optional<int64_t> n = getConstantIntValue(size), unit = getConstantIntValue(stride);
    if (!n || !unit || *unit != 1)
      return std::nullopt;
    s.sizes.push_back(*n);
    if (std::optional<int64_t> c = getConstantIntValue(offset)) {
      if (*c != 0 || *n != shape[d])
        return std::nullopt;
      s.ivOfDim.push_back(-1);
      continue;
    }
    auto iv = dyn_cast<BlockArgument>(cast<Value>(offset));
    if (!iv || iv.getOwner() != forall.getBody() || iv.getArgNumber() >= forall.getRank())
      return std::nullopt;
    unsigned k = iv.getArgNumber();
    // The iteration's tile, and only its: in steps of its size, each induction variable once.
    if (used[k] || s.steps[k] != *n || s.ubs[k] != shape[d])
      return std::nullopt;
    used[k] = true;
    s.ivOfDim.push_back(k);
  }
  // An induction variable the offsets do not use would give two iterations the same tile.
  for (unsigned k = 0; k < forall.getRank(); ++k)
    if (!used[k] && s.ubs[k] != s.steps[k])
      return std::nullopt;
  s.shape.assign(view.getType().getShape().begin(), view.getType().getShape().end());
  return s;
}

// The private alloca `v` views, if any.
bool isThreadPrivate(Value v) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>())
    v = sub.getSource();
  auto alloca = v.getDefiningOp<memref::AllocaOp>();
  return alloca && alloca->hasAttr(kCudaThreadPrivateAttrName);
}

// Elements of a private tile whose loops are unrolled: a thread's share of a staged block
// (StageContractions gives at most 16); more would not fit in registers anyway.
constexpr int64_t kMaxUnrolledTile = 64;

} // namespace

bool mlir::hexir::isThreadForall(scf::ForallOp forall) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  return mapping && !mapping->empty() && isa<gpu::GPUThreadMappingAttr>((*mapping)[0]);
}

bool mlir::hexir::touchesThreadPrivate(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperands(), [](Value v) { return isThreadPrivate(v); });
}

LogicalResult mlir::hexir::lowerOverThreadPrivate(RewriterBase &rewriter, linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> general = linalg::generalizeNamedOp(rewriter, op);
    if (failed(general))
      return op->emitError("cannot generalize this op of a thread's private tile");
    generic = *general;
  }
  // The loops the private operands index, innermost; the others outside in their order.
  unsigned loops = generic.getNumLoops();
  SmallVector<bool> indexes(loops, false);
  for (OpOperand &operand : generic->getOpOperands())
    if (isThreadPrivate(operand.get()))
      for (AffineExpr e : generic.getMatchingIndexingMap(&operand).getResults())
        if (auto d = dyn_cast<AffineDimExpr>(e))
          indexes[d.getPosition()] = true;
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < loops; ++d)
    if (!indexes[d])
      order.push_back(d);
  unsigned outer = order.size();
  for (unsigned d = 0; d < loops; ++d)
    if (indexes[d])
      order.push_back(d);
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  int64_t tile = 1;
  for (unsigned k = outer; k < loops; ++k)
    tile *= ranges[order[k]];
  if (!llvm::equal(order, llvm::seq<unsigned>(0, loops))) {
    FailureOr<linalg::GenericOp> interchanged = linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(interchanged))
      return generic->emitError("cannot interchange the loops of this op of a thread's private tile");
    generic = *interchanged;
  }
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::LinalgLoops> nest = linalg::linalgOpToLoops(rewriter, generic);
  if (failed(nest))
    return generic->emitError("cannot convert this op to loops");
  rewriter.eraseOp(generic);
  if (ShapedType::isDynamic(tile) || tile > kMaxUnrolledTile || nest->size() != loops)
    return success();  // correct, in local memory
  for (unsigned k = loops; k-- > outer;)
    if (auto loop = dyn_cast<scf::ForOp>((*nest)[k]); !loop || failed(loopUnrollFull(loop)))
      return generic->getParentOp()->emitError("cannot unroll the loops over a thread's private tile");
  return success();
}

int64_t mlir::hexir::privatizeThreadTiles(RewriterBase &rewriter, gpu::GPUFuncOp gfn, scf::ForallOp blocks,
                                          int64_t threads) {
  SmallVector<memref::AllocOp> shared;
  blocks.walk([&](memref::AllocOp alloc) {
    if (gpu::GPUDialect::isWorkgroupMemoryAddressSpace(alloc.getType().getMemorySpace()) &&
        alloc.getType().hasStaticShape())
      shared.push_back(alloc);
  });
  int64_t count = 0;
  for (memref::AllocOp alloc : shared) {
    MemRefType type = alloc.getType();
    SmallVector<memref::SubViewOp> views;
    std::optional<TileSignature> common;
    bool qualifies = !alloc->use_empty();
    for (Operation *user : alloc->getUsers()) {
      auto view = dyn_cast<memref::SubViewOp>(user);
      std::optional<TileSignature> s = view ? signatureOf(view, type.getShape(), threads) : std::nullopt;
      if (!s || (common && !(*s == *common))) {
        qualifies = false;
        break;
      }
      common = s;
      views.push_back(view);
    }
    if (!qualifies)
      continue;
    // At the start of the kernel: NVPTX has no dynamic stack, and SROA promotes entry allocas.
    rewriter.setInsertionPointToStart(&gfn.getBody().front());
    auto tile = memref::AllocaOp::create(rewriter, alloc.getLoc(),
                                         MemRefType::get(common->shape, type.getElementType()));
    tile->setAttr(kCudaThreadPrivateAttrName, rewriter.getUnitAttr());
    for (memref::SubViewOp view : views) {
      retargetUses(rewriter, view.getResult(), tile.getResult());
      rewriter.eraseOp(view);
    }
    rewriter.eraseOp(alloc);
    ++count;
  }
  return count;
}

//===- PrefetchStreams.cpp - the next cache block of weights, while this one is reused ----===//
//
// A network's weights do not stay in the caches between runs (resnet18 has 47 MB, a BERT-base
// layer 28 MB): each matmul or convolution streams its weights from memory once per run, block
// by block. The first register tile to touch a block waits for memory at every step (the
// hardware prefetchers stop at page boundaries), the others reuse it from L2. Measured on this
// project's kernels: a 7x7x512 convolution took 1.60 ms with its 9.4 MB filter in cache and
// 2.15 ms without. Here the innermost loop of a register tile (constant bounds, step 1: one
// cache block of the reduction) prefetches, for every vector it loads from a large operand at
// `base + iv`, the element `next + iv` of the next block, with `next = min(base + span, dim -
// span)` computed outside the loop (the last block prefetches itself, which is harmless and
// never reads outside the operand).
//
// The block is reused by the loops around the register tile (a convolution's output rows, a
// matmul's row tiles), and all of them would prefetch it: the first pass over the block then
// asks memory for the whole next one at once (a 3x3 block of 64 channels of two 32-wide panels:
// 144 KiB while 3 us of FMAs run, 48 GB/s from a core that streams 15), waits for it, and the
// other passes find it in L2. The prefetches are spread over the passes instead: with 2^k the
// largest power of two at most R, pass r prefetches steps [r' * span / 2^k, (r' + 1) * span /
// 2^k) of the next block, r' = r mod 2^k, as (r' * span + iv) >> k (each line 2^k times in a
// row; the repeats hit the line in flight), so that memory streams the next block while most
// of the current one computes.
//
// A loop that packs a block of a run-time B into a stack buffer (panels packed in the matmul's
// kernel) is not a register tile: each row of B it loads prefetches that row at the next group
// of panels, where the next block it packs starts (prefetchNextPanels).
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_PREFETCHSTREAMS
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

constexpr int64_t kCacheLine = 64;

// `index` as `base + iv` with `base` defined outside `loop`: the loop's induction variable
// itself (base 0) or an affine.apply of s0 + s1 / d0 + d1 of the two.
std::optional<Value> baseOf(Value index, scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  if (index == iv)
    return Value();
  auto apply = index.getDefiningOp<affine::AffineApplyOp>();
  if (!apply || apply->getNumOperands() != 2 || apply.getAffineMap().getNumResults() != 1)
    return std::nullopt;
  AffineExpr e = apply.getAffineMap().getResult(0);
  auto sum = dyn_cast<AffineBinaryOpExpr>(e);
  if (!sum || sum.getKind() != AffineExprKind::Add)
    return std::nullopt;
  auto isOperand = [](AffineExpr x) { return isa<AffineSymbolExpr, AffineDimExpr>(x); };
  if (!isOperand(sum.getLHS()) || !isOperand(sum.getRHS()) || sum.getLHS() == sum.getRHS())
    return std::nullopt;
  Value a = apply->getOperand(0), c = apply->getOperand(1);
  Value base = a == iv ? c : c == iv ? a : Value();
  if (!base || loop->isAncestor(base.getParentBlock()->getParentOp()) || base == iv)
    return std::nullopt;
  return base;
}

// Whether `v` is computed from `iv` (through the ops that define it).
bool dependsOn(Value v, Value iv, llvm::DenseMap<Value, bool> &memo) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  bool found = llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, iv, memo); });
  memo[v] = found;
  return found;
}

// The loops around `loop` that pass over the same block again: its ancestors below the first
// one that moves the block (whose induction variable `block` depends on), whose induction
// variables none of `indices` depends on, with constant bounds. `passes`: their iterations.
struct Reuse {
  SmallVector<scf::ForOp> loops;  // innermost first
  int64_t passes = 1;
};
Reuse reuseLoops(scf::ForOp loop, Value block, ValueRange indices) {
  Reuse reuse;
  for (Operation *p = loop->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp()) {
    auto outer = dyn_cast<scf::ForOp>(p);
    if (!outer)
      continue;
    Value iv = outer.getInductionVar();
    llvm::DenseMap<Value, bool> ivMemo;
    if (block && dependsOn(block, iv, ivMemo))
      break;
    if (llvm::any_of(indices, [&](Value index) { return dependsOn(index, iv, ivMemo); }))
      continue;
    std::optional<int64_t> lb = getConstantIntValue(outer.getLowerBound()),
                           ub = getConstantIntValue(outer.getUpperBound()),
                           step = getConstantIntValue(outer.getStep());
    if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
      continue;
    int64_t trips = (*ub - *lb + *step - 1) / *step;
    if (trips < 2)
      continue;
    reuse.loops.push_back(outer);
    reuse.passes *= trips;
  }
  return reuse;
}

struct PrefetchStreamsPass : public mlir::hexir::impl::PrefetchStreamsBase<PrefetchStreamsPass> {
  using PrefetchStreamsBase::PrefetchStreamsBase;

  void runOnOperation() override {
    getOperation().walk([&](scf::ForOp loop) {
      if (loop.getBody()->walk([](scf::ForOp) { return WalkResult::interrupt(); }).wasInterrupted())
        return;  // not innermost
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                             ub = getConstantIntValue(loop.getUpperBound()),
                             step = getConstantIntValue(loop.getStep());
      if (!lb || !ub || !step || *lb != 0 || *step != 1 || *ub < 2)
        return;
      int64_t span = *ub;
      auto fn = loop->getParentOfType<func::FuncOp>();
      Positions positions;
      for (vector::LoadOp load : llvm::to_vector(loop.getBody()->getOps<vector::LoadOp>()))
        prefetch(load, loop, span, fn, positions);
    });
  }

  // Index computations shared between the loads of one loop: (base or block index, dimension,
  // innermost reuse loop) -> the prefetched position.
  using Positions = llvm::DenseMap<std::tuple<Value, int64_t, Operation *>, Value>;

  // Inside `loop`, the step of the next block that this pass over it prefetches: iv itself
  // without reuse loops, else (r' * span + iv) >> k for pass r of R (the reuse loops'
  // iterations as one index, innermost fastest), 2^k the largest power of two at most R and
  // r' = r mod 2^k: the first 2^k passes fetch the whole next block, the others repeat them
  // and find it in L2. r' * span is computed outside the loop; inside, an add and a shift (a
  // division by 7 took seven instructions per step of a 14-FMA tile).
  Value spreadStep(scf::ForOp loop, const Reuse &reuse, int64_t span) {
    Value iv = loop.getInductionVar();
    if (reuse.loops.empty())
      return iv;
    int64_t shift = llvm::Log2_64(static_cast<uint64_t>(reuse.passes));
    MLIRContext *ctx = loop.getContext();
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    AffineExpr pass = getAffineConstantExpr(0, ctx);
    SmallVector<Value> ivs;
    int64_t stride = 1;
    for (unsigned i = 0; i < reuse.loops.size(); ++i) {
      scf::ForOp outer = reuse.loops[i];
      int64_t lb = *getConstantIntValue(outer.getLowerBound()), ub = *getConstantIntValue(outer.getUpperBound()),
              step = *getConstantIntValue(outer.getStep());
      pass = pass + (getAffineDimExpr(i, ctx) - lb).floorDiv(step) * stride;
      stride *= (ub - lb + step - 1) / step;
      ivs.push_back(outer.getInductionVar());
    }
    if ((int64_t(1) << shift) < reuse.passes)
      pass = pass % (int64_t(1) << shift);
    Value start = affine::AffineApplyOp::create(b, loc, AffineMap::get(ivs.size(), 0, pass * span), ivs);
    Value bits = arith::ConstantIndexOp::create(b, loc, shift);
    b.setInsertionPointToStart(loop.getBody());
    Value sum = arith::AddIOp::create(b, loc, start, iv);
    return arith::ShRUIOp::create(b, loc, sum, bits);
  }

  // Prefetches the next block's copy of what `load` reads.
  void prefetch(vector::LoadOp load, scf::ForOp loop, int64_t span, func::FuncOp fn, Positions &positions) {
    auto arg = dyn_cast<BlockArgument>(load.getBase());
    MemRefType type = load.getMemRefType();
    if (!arg || arg.getOwner() != &fn.getBody().front() || !type.hasStaticShape() ||
        type.getNumElements() * (type.getElementTypeBitWidth() / 8) < minBytes)
      return;
    if (std::optional<int64_t> group = packedPanels(loop)) {
      prefetchNextPanels(load, loop, type, *group);
      return;
    }
    // Exactly one index moves with the loop, as base + iv.
    std::optional<unsigned> moving;
    Value base;
    OpBuilder b(loop);
    for (auto [d, index] : llvm::enumerate(load.getIndices())) {
      if (loop.isDefinedOutsideOfLoop(index))
        continue;
      std::optional<Value> found = baseOf(index, loop);
      if (!found || moving)
        return;
      moving = d;
      base = *found;
    }
    if (!moving)
      return;
    int64_t dim = type.getDimSize(*moving);
    Location loc = load.getLoc();
    SmallVector<Value> indices(load.getIndices());
    MLIRContext *ctx = loop.getContext();
    if (dim < 2 * span) {
      // A loop over the whole dimension (a reduction kept in one block: a packed panel's K
      // steps) has no next block along it; the next one in memory is the same row of the next
      // index outside it (the next panel, min(p + 1, P - 1)), while its index stays put.
      unsigned outer = *moving - 1;
      if (dim != span || base || *moving == 0 || type.getDimSize(outer) < 2)
        return;
      Reuse reuse = reuseLoops(loop, indices[outer], load.getIndices());
      Operation *innermost = reuse.loops.empty() ? nullptr : reuse.loops.front().getOperation();
      Value &nextOuter = positions[{indices[outer], -1, nullptr}];
      if (!nextOuter) {
        AffineMap map = AffineMap::get(
            0, 1, {getAffineSymbolExpr(0, ctx) + 1, getAffineConstantExpr(type.getDimSize(outer) - 1, ctx)}, ctx);
        nextOuter = affine::AffineMinOp::create(b, loc, map, ValueRange{indices[outer]});
      }
      Value &step = positions[{Value(), -2, innermost}];
      if (!step)
        step = spreadStep(loop, reuse, span);
      indices[outer] = nextOuter;
      indices[*moving] = step;
      emitPrefetches(load, loop, indices, type);
      return;
    }
    Reuse reuse = reuseLoops(loop, base, load.getIndices());
    Operation *innermost = reuse.loops.empty() ? nullptr : reuse.loops.front().getOperation();
    Value &at = positions[{base, dim, innermost}];
    if (!at) {
      // next = min(base + span, dim - span), outside the loop; then next + step inside it.
      Value next;
      if (!base) {
        next = arith::ConstantIndexOp::create(b, loc, span);
      } else {
        AffineMap map = AffineMap::get(
            0, 1, {getAffineSymbolExpr(0, ctx) + span, getAffineConstantExpr(dim - span, ctx)}, ctx);
        next = affine::AffineMinOp::create(b, loc, map, ValueRange{base});
      }
      Value step = spreadStep(loop, reuse, span);
      OpBuilder inside(step.getContext());
      if (step == loop.getInductionVar())
        inside.setInsertionPointToStart(loop.getBody());
      else
        inside.setInsertionPointAfterValue(step);
      AffineMap add = AffineMap::get(0, 2, getAffineSymbolExpr(0, ctx) + getAffineSymbolExpr(1, ctx), ctx);
      at = affine::AffineApplyOp::create(inside, loc, add, ValueRange{next, step});
    }
    indices[*moving] = at;
    emitPrefetches(load, loop, indices, type);
  }

  // The panels of the block that `loop` packs, if it copies into a stack buffer: a block of
  // B packed into panels [panels][k][nr] inside the matmul's kernel (packPanelsInPlace).
  // (The block is a view of the kernel's packing buffer, see packPanelsInPlace.)
  static std::optional<int64_t> packedPanels(scf::ForOp loop) {
    for (vector::StoreOp store : loop.getBody()->getOps<vector::StoreOp>())
      if (auto view = store.getBase().getDefiningOp<memref::ViewOp>();
          view && view.getSource().getDefiningOp<memref::AllocaOp>() && view.getType().getRank() == 3)
        return view.getType().getDimSize(0);
    return std::nullopt;
  }

  // A packing loop reads its rows of B (viewed as [K][N/nr][nr]) a few lines at a time, a new
  // page at every row (the rows of a transformer's B are 12 KiB apart), which no hardware
  // prefetcher follows. The blocks of a group of panels follow each other down B, and the next
  // group is packed a few blocks later: each load prefetches its row of the next group's
  // panels (`group` further, the last panel itself), in pages it has just touched.
  void prefetchNextPanels(vector::LoadOp load, scf::ForOp loop, MemRefType type, int64_t group) {
    if (type.getRank() != 3 || load.getVectorType().getNumElements() != type.getDimSize(2))
      return;
    SmallVector<Value> indices(load.getIndices());
    OpBuilder b(loop.getBody()->getTerminator());
    MLIRContext *ctx = loop.getContext();
    AffineMap next = AffineMap::get(
        0, 1, {getAffineSymbolExpr(0, ctx) + group, getAffineConstantExpr(type.getDimSize(1) - 1, ctx)}, ctx);
    if (loop.isDefinedOutsideOfLoop(indices[1]))
      b.setInsertionPoint(loop);
    indices[1] = affine::AffineMinOp::create(b, load.getLoc(), next, ValueRange{indices[1]});
    emitPrefetches(load, loop, indices, type);
  }

  // Prefetches what `load` would read at `indices`: one prefetch per cache line the vector
  // spans (a register tile's row of two AVX-512 vectors is one vector<32xf32> load: 128 bytes,
  // two lines), each inside what the load reads. At the end of the step, after the FMAs:
  // before the loads, LLVM then schedules the loads of the broadcast inputs ahead of every FMA
  // and spills accumulators (a 14x14 convolution's 28-accumulator tile: 94 instructions per
  // step instead of 50, 2.1 ms instead of 1.4).
  void emitPrefetches(vector::LoadOp load, scf::ForOp loop, ArrayRef<Value> indices, MemRefType type) {
    Location loc = load.getLoc();
    OpBuilder b(loop.getBody()->getTerminator());
    int64_t elementBytes = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
    int64_t vectorBytes = load.getVectorType().getNumElements() * elementBytes;
    for (int64_t offset = 0; offset < vectorBytes; offset += kCacheLine) {
      SmallVector<Value> at(indices);
      if (offset) {
        AffineMap shift = AffineMap::get(0, 1, getAffineSymbolExpr(0, b.getContext()) + offset / elementBytes);
        at.back() = affine::AffineApplyOp::create(b, loc, shift, ValueRange{indices.back()});
      }
      memref::PrefetchOp::create(b, loc, load.getBase(), at, /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
  }
};

} // namespace

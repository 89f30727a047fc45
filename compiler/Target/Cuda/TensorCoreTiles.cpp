//===- TensorCoreTiles.cpp - a staged contraction's steps on tensor cores -===//
#include "Target/Cuda/TensorCoreTiles.h"

#include "Dialect/HexirDialect.h"
#include "Target/Cuda/ThreadPrivate.h"
#include "Target/Cuda/ViewRetarget.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

constexpr int64_t kWarp = 32;
// The shape of one mma.sync of TF32: a 16x8 tile of the output, 8 of K.
constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 8;
// Accumulators a lane keeps: beyond this they would not stay in registers.
constexpr int64_t kMaxLaneAccumulators = 64;

// out = out + x * y (either operand order) in f32: what a matmul's and a convolution's body is.
bool isMultiplyAdd(linalg::LinalgOp op) {
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3 ||
      !llvm::all_of(body.getArgumentTypes(), [](Type t) { return t.isF32(); }))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add = mul ? dyn_cast<arith::AddFOp>(mul->getNextNode()) : arith::AddFOp();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield.getValues().size() != 1 || yield.getValues()[0] != add.getResult())
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1), out = body.getArgument(2);
  bool product = (mul.getLhs() == x && mul.getRhs() == y) || (mul.getLhs() == y && mul.getRhs() == x);
  bool sum = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
             (add.getRhs() == out && add.getLhs() == mul.getResult());
  return product && sum;
}

// The workgroup buffer a thread's operand views (a subview of it), or null.
Value sharedSource(Value operand) {
  auto view = operand.getDefiningOp<memref::SubViewOp>();
  if (!view)
    return {};
  auto alloc = view.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || !gpu::GPUDialect::isWorkgroupMemoryAddressSpace(alloc.getType().getMemorySpace()) ||
      !alloc.getType().hasStaticShape())
    return {};
  return alloc.getResult();
}

// A staged step that is a matrix product, read at the block's level.
struct Product {
  Operation *steps;        // the loop over K's steps (the step itself where there is one step)
  scf::ForallOp forall;    // the step's thread forall, replaced
  Value a, b, acc;         // the shared tiles of the two inputs and the accumulator
  SmallVector<int64_t> aShape, bShape;  // the input tiles' shapes (a and b may be padded wider)
  SmallVector<AffineMap> maps;  // a, b, acc
  SmallVector<int64_t> ranges;  // the block's extent of each loop
  SmallVector<unsigned> mLoops, nLoops, kLoops;
  int64_t m = 1, n = 1, k = 1;
};

std::optional<Product> matchProduct(scf::ForallOp blocks) {
  SmallVector<scf::ForallOp> steps;
  blocks.walk([&](scf::ForallOp forall) {
    if (isThreadForall(forall) && llvm::any_of(forall.getBody()->getOps<linalg::LinalgOp>(),
                     [](linalg::LinalgOp op) { return op.getNumReductionLoops() > 0; }))
      steps.push_back(forall);
  });
  if (steps.size() != 1)
    return std::nullopt;
  Product p;
  p.forall = steps.front();
  p.steps = p.forall->getParentOp();
  if (p.steps == blocks)
    p.steps = p.forall;  // one step: its loop folded away
  else if (!isa<scf::ForOp>(p.steps) || p.steps->getParentOp() != blocks)
    return std::nullopt;
  linalg::LinalgOp step;
  for (Operation &op : p.forall.getBody()->without_terminator()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (step)
        return std::nullopt;
      step = linalgOp;
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      if (copy.getSource() != copy.getTarget())  // what in-place bufferization leaves
        return std::nullopt;
    } else if (!isa<memref::SubViewOp>(op) && !isMemoryEffectFree(&op)) {
      return std::nullopt;
    }
  }
  if (!step || step.getNumDpsInputs() != 2 || step.getNumDpsInits() != 1 || !isMultiplyAdd(step))
    return std::nullopt;
  p.a = sharedSource(step.getDpsInputs()[0]);
  p.b = sharedSource(step.getDpsInputs()[1]);
  p.acc = sharedSource(step.getDpsInits()[0]);
  if (!p.a || !p.b || !p.acc)
    return std::nullopt;
  p.aShape.assign(cast<MemRefType>(p.a.getType()).getShape().begin(), cast<MemRefType>(p.a.getType()).getShape().end());
  p.bShape.assign(cast<MemRefType>(p.b.getType()).getShape().begin(), cast<MemRefType>(p.b.getType()).getShape().end());
  // The block's loop ranges: the op over the whole tiles (named ops take them from the shapes).
  Operation *whole = step->clone();
  whole->setOperands(ValueRange{p.a, p.b, p.acc});
  p.ranges = cast<linalg::LinalgOp>(whole).getStaticLoopRanges();
  whole->destroy();
  p.maps = step.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = step.getIteratorTypesArray();
  for (unsigned d = 0; d < p.ranges.size(); ++d) {
    if (ShapedType::isDynamic(p.ranges[d]))
      return std::nullopt;
    if (p.ranges[d] == 1)
      continue;  // index 0 whatever role it has
    bool inA = p.maps[0].isFunctionOfDim(d), inB = p.maps[1].isFunctionOfDim(d), inC = p.maps[2].isFunctionOfDim(d);
    if (iterators[d] == utils::IteratorType::parallel && inA && !inB && inC) {
      p.mLoops.push_back(d);
      p.m *= p.ranges[d];
    } else if (iterators[d] == utils::IteratorType::parallel && !inA && inB && inC) {
      p.nLoops.push_back(d);
      p.n *= p.ranges[d];
    } else if (iterators[d] == utils::IteratorType::reduction && inA && inB && !inC) {
      p.kLoops.push_back(d);
      p.k *= p.ranges[d];
    } else {
      return std::nullopt;  // a batch or depthwise channel of several, a lone sum
    }
  }
  return p;
}

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// How the block's warps share its 16x8 tiles: a grid of warpsM x warpsN warps, each owning
// tilesM x tilesN tiles. The most warps that divide the tiles evenly, then the fewest fragment
// loads per 8 of K (4 per tile row of A, 2 per tile column of B).
struct WarpGrid {
  int64_t warpsM = 0, warpsN = 0, tilesM = 0, tilesN = 0;
  int64_t warps() const { return warpsM * warpsN; }
};

std::optional<WarpGrid> chooseWarps(int64_t tilesM, int64_t tilesN, int64_t maxWarps) {
  for (int64_t warps = maxWarps; warps >= 1; warps /= 2) {
    std::optional<WarpGrid> best;
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm || tilesM % wm || tilesN % (warps / wm))
        continue;
      WarpGrid g{wm, warps / wm, tilesM / wm, tilesN / (warps / wm)};
      if (4 * g.tilesM * g.tilesN > kMaxLaneAccumulators)
        continue;
      if (!best || 4 * g.tilesM + 2 * g.tilesN < 4 * best->tilesM + 2 * best->tilesN)
        best = g;
    }
    if (best)
      return best;
  }
  return std::nullopt;
}

// Builds the code of the three thread foralls.
struct Emitter {
  OpBuilder &b;
  Location loc;
  const Product &p;
  WarpGrid grid;
  Value frag;  // the lane's accumulators: tilesM x tilesN x 4

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value mul(Value x, int64_t y) { return y == 1 ? x : arith::MulIOp::create(b, loc, x, index(y)).getResult(); }
  Value below(Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, index(bound));
  }
  // x, or the last valid position where x may be past it (a padded row, column or K).
  Value clamp(Value x, int64_t extent, int64_t padded) {
    return padded == extent ? x : arith::MinUIOp::create(b, loc, x, index(extent - 1)).getResult();
  }

  // The loops' values at linear positions m, n, k of the product (null: that role's loops 0).
  SmallVector<Value> loopValues(Value mLin, Value nLin, Value kLin) {
    SmallVector<Value> values(p.ranges.size(), index(0));
    auto digits = [&](ArrayRef<unsigned> loops, Value lin) {
      if (!lin)
        return;
      Value rest = lin;
      for (unsigned i = loops.size(); i-- > 0;) {
        int64_t extent = p.ranges[loops[i]];
        if (i == 0) {
          values[loops[i]] = rest;
          break;
        }
        values[loops[i]] = arith::RemUIOp::create(b, loc, rest, index(extent));
        rest = arith::DivUIOp::create(b, loc, rest, index(extent));
      }
    };
    digits(p.mLoops, mLin);
    digits(p.nLoops, nLin);
    digits(p.kLoops, kLin);
    return values;
  }

  SmallVector<Value> indices(AffineMap map, ArrayRef<Value> values) {
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults())
      result.push_back(affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, e), values));
    return result;
  }

  // Per lane: its warp's grid position and its place in the mma layout.
  struct Lane {
    Value lane, group, thread, warpRow, warpCol;
  };
  Lane lane(Value t) {
    Value l = arith::RemUIOp::create(b, loc, t, index(kWarp));
    Value warp = arith::DivUIOp::create(b, loc, t, index(kWarp));
    return {l, arith::DivUIOp::create(b, loc, l, index(4)), arith::RemUIOp::create(b, loc, l, index(4)),
            arith::DivUIOp::create(b, loc, warp, index(grid.warpsN)),
            arith::RemUIOp::create(b, loc, warp, index(grid.warpsN))};
  }
  Value rowBase(const Lane &l, int64_t i) { return mul(add(mul(l.warpRow, grid.tilesM), i), kTileM); }
  Value colBase(const Lane &l, int64_t j) { return mul(add(mul(l.warpCol, grid.tilesN), j), kTileN); }

  scf::ForallOp threadForall() {
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(kWarp * grid.warps())}, ValueRange{},
        b.getArrayAttr({gpu::GPUThreadMappingAttr::get(b.getContext(), gpu::MappingId::LinearDim0)}));
    b.setInsertionPointToStart(forall.getBody());
    return forall;
  }

  // Each lane's accumulators to (toShared) or from the shared accumulator: element c of tile
  // (i, j) is row g + 8 (c / 2), column 2 t + c % 2 of the tile. Padded rows and columns: 0
  // in, nothing out.
  void moveAccumulators(bool toShared) {
    int64_t mp = roundUp(p.m, kTileM), np = roundUp(p.n, kTileN);
    scf::ForallOp forall = threadForall();
    Lane l = lane(forall.getInductionVar(0));
    Value zero = arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
    for (int64_t i = 0; i < grid.tilesM; ++i)
      for (int64_t j = 0; j < grid.tilesN; ++j)
        for (int64_t c = 0; c < 4; ++c) {
          Value m = add(add(rowBase(l, i), l.group), 8 * (c / 2));
          Value n = add(add(colBase(l, j), mul(l.thread, 2)), c % 2);
          Value inside;
          if (mp != p.m)
            inside = below(m, p.m);
          if (np != p.n)
            inside = inside ? arith::AndIOp::create(b, loc, inside, below(n, p.n)).getResult() : below(n, p.n);
          SmallVector<Value> at = indices(p.maps[2], loopValues(clamp(m, p.m, mp), clamp(n, p.n, np), Value()));
          SmallVector<Value> slot{index(i), index(j), index(c)};
          if (!toShared) {
            Value v = memref::LoadOp::create(b, loc, p.acc, at);
            if (inside)
              v = arith::SelectOp::create(b, loc, inside, v, zero);
            memref::StoreOp::create(b, loc, v, frag, slot);
            continue;
          }
          OpBuilder::InsertionGuard guard(b);
          if (inside) {
            auto guarded = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
            b.setInsertionPoint(guarded.thenBlock()->getTerminator());
          }
          memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, frag, slot), p.acc, at);
        }
    b.setInsertionPointAfter(forall);
  }

  // One region of a warp_mma: the element at (row, col) of A (rows m, columns k) or of B
  // (rows k, columns n), read from `tile` (a view of the shared input tile); K's padding reads 0.
  void elementRegion(Region &region, bool isA, Value tile, Value base, Value kStart) {
    int64_t kp = roundUp(p.k, kTileK), mp = roundUp(p.m, kTileM), np = roundUp(p.n, kTileN);
    Block *block = b.createBlock(&region, {}, {b.getIndexType(), b.getIndexType()}, {loc, loc});
    b.setInsertionPointToStart(block);
    Value row = block->getArgument(0), col = block->getArgument(1);
    Value k = add(kStart, isA ? col : row);
    Value other = add(base, isA ? row : col);
    Value kIn = clamp(k, p.k, kp);
    SmallVector<Value> values = isA ? loopValues(clamp(other, p.m, mp), Value(), kIn)
                                    : loopValues(Value(), clamp(other, p.n, np), kIn);
    Value v = memref::LoadOp::create(b, loc, tile, indices(p.maps[isA ? 0 : 1], values));
    if (kp != p.k)
      v = arith::SelectOp::create(b, loc, below(k, p.k), v,
                                  arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f)));
    YieldOp::create(b, loc, v);
  }

  // The step: per 8 of K, per tile of the lane's warp, one warp_mma on its accumulators.
  void accumulate() {
    scf::ForallOp forall = threadForall();
    Lane l = lane(forall.getInductionVar(0));
    // Whole views of the tiles: what PipelineCopies retargets to a slot.
    auto whole = [&](Value tile, ArrayRef<int64_t> shape) -> Value {
      SmallVector<OpFoldResult> zeros(shape.size(), b.getIndexAttr(0)), ones(shape.size(), b.getIndexAttr(1));
      return memref::SubViewOp::create(b, loc, tile, zeros, getAsIndexOpFoldResult(b.getContext(), shape), ones);
    };
    Value aTile = whole(p.a, p.aShape), bTile = whole(p.b, p.bShape);
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(roundUp(p.k, kTileK)), index(kTileK));
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    for (int64_t i = 0; i < grid.tilesM; ++i)
      for (int64_t j = 0; j < grid.tilesN; ++j) {
        SmallVector<Value> acc;
        for (int64_t c = 0; c < 4; ++c)
          acc.push_back(memref::LoadOp::create(b, loc, frag, ValueRange{index(i), index(j), index(c)}));
        Value rows = rowBase(l, i), cols = colBase(l, j);
        auto mma = WarpMmaOp::create(b, loc, TypeRange(SmallVector<Type>(4, b.getF32Type())), l.lane, acc);
        {
          OpBuilder::InsertionGuard guard(b);
          elementRegion(mma.getA(), /*isA=*/true, aTile, rows, kk);
          elementRegion(mma.getB(), /*isA=*/false, bTile, cols, kk);
        }
        for (int64_t c = 0; c < 4; ++c)
          memref::StoreOp::create(b, loc, mma.getResult(c), frag, ValueRange{index(i), index(j), index(c)});
      }
    b.setInsertionPointAfter(forall);
  }
};

// The word (4-byte) offset in `tile`, its innermost dimension padded by `pad`, of the element
// `map` indexes at the product's linear position (m or n, k): the same delinearization as
// Emitter::loopValues, evaluated here.
int64_t wordOffset(const Product &p, AffineMap map, ArrayRef<int64_t> shape, int64_t pad, std::optional<int64_t> m,
                   std::optional<int64_t> n, int64_t k) {
  SmallVector<int64_t> values(p.ranges.size(), 0);
  auto digits = [&](ArrayRef<unsigned> loops, int64_t lin) {
    for (unsigned i = loops.size(); i-- > 0;) {
      values[loops[i]] = i == 0 ? lin : lin % p.ranges[loops[i]];
      lin /= p.ranges[loops[i]];
    }
  };
  if (m)
    digits(p.mLoops, std::min(*m, p.m - 1));
  if (n)
    digits(p.nLoops, std::min(*n, p.n - 1));
  digits(p.kLoops, std::min(k, p.k - 1));
  SmallVector<AffineExpr> dims;
  for (int64_t v : values)
    dims.push_back(getAffineConstantExpr(v, map.getContext()));
  int64_t offset = 0, stride = 1;
  for (unsigned r = map.getNumResults(); r-- > 0;) {
    auto c = dyn_cast<AffineConstantExpr>(map.getResult(r).replaceDims(dims));
    offset += (c ? c.getValue() : 0) * stride;
    stride *= shape[r] + (r + 1 == shape.size() ? pad : 0);
  }
  return offset;
}

// Bank conflicts of a warp's fragment loads from a shared tile (4-byte banks, 32 of them): over
// its loads (A: a0..a3, B: b0, b1), the most distinct words one bank serves in one load.
int64_t bankConflicts(const Product &p, bool isA, ArrayRef<int64_t> shape, int64_t pad) {
  AffineMap map = p.maps[isA ? 0 : 1];
  int64_t worst = 0;
  for (int64_t reg = 0; reg < (isA ? 4 : 2); ++reg) {
    llvm::DenseMap<int64_t, llvm::SmallDenseSet<int64_t, 4>> banks;
    for (int64_t lane = 0; lane < kWarp; ++lane) {
      int64_t g = lane / 4, t = lane % 4, word;
      if (isA)  // a_reg: row g (+ 8 for odd reg), column t (+ 4 for reg >= 2)
        word = wordOffset(p, map, shape, pad, g + 8 * (reg % 2), std::nullopt, t + 4 * (reg / 2));
      else  // b_reg: row t (+ 4 for reg 1), column g
        word = wordOffset(p, map, shape, pad, std::nullopt, g, t + 4 * reg);
      banks[word % 32].insert(word);
    }
    for (auto &[bank, words] : banks)
      worst = std::max<int64_t>(worst, words.size());
  }
  return worst;
}

// Pads the innermost dimension of shared tile `tile` (a memref.alloc) so that its fragment
// loads hit distinct banks (a 64x16 A tile's rows g and g + 2 share banks: 4-way conflicts;
// 20 floats a row have none). Pads stay multiples of 4 floats, so every row still starts 16
// bytes aligned for the tile copies' vectors. Returns the tile to read (the padded one).
Value padAgainstBankConflicts(RewriterBase &rewriter, const Product &p, bool isA) {
  Value tile = isA ? p.a : p.b;
  auto alloc = tile.getDefiningOp<memref::AllocOp>();
  MemRefType type = alloc.getType();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t best = 0, fewest = bankConflicts(p, isA, shape, 0);
  for (int64_t pad = 4; pad < 32 && fewest > 1; pad += 4)
    if (int64_t c = bankConflicts(p, isA, shape, pad); c < fewest) {
      fewest = c;
      best = pad;
    }
  if (best == 0)
    return tile;
  SmallVector<int64_t> padded(shape);
  padded.back() += best;
  rewriter.setInsertionPoint(alloc);
  auto wide = memref::AllocOp::create(rewriter, alloc.getLoc(),
                                      MemRefType::get(padded, type.getElementType(), MemRefLayoutAttrInterface(),
                                                      type.getMemorySpace()),
                                      alloc.getAlignmentAttr());
  // Every use reads a view of the tile's shape, made where it is used (PipelineCopies takes
  // only uses inside the steps' loop).
  SmallVector<OpFoldResult> zeros(shape.size(), rewriter.getIndexAttr(0)), ones(shape.size(), rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(rewriter.getContext(), shape);
  for (OpOperand &use : llvm::make_early_inc_range(alloc->getUses())) {
    rewriter.setInsertionPoint(use.getOwner());
    Value view = memref::SubViewOp::create(rewriter, alloc.getLoc(), wide, zeros, sizes, ones);
    retargetUse(rewriter, use, view);
  }
  rewriter.eraseOp(alloc);
  return wide;
}

} // namespace

bool mlir::hexir::useTensorCores(RewriterBase &rewriter, gpu::GPUFuncOp gfn, scf::ForallOp blocks, int64_t maxWarps) {
  std::optional<Product> p = matchProduct(blocks);
  if (!p || p->mLoops.empty() || p->nLoops.empty() || p->kLoops.empty())
    return false;
  int64_t mp = roundUp(p->m, kTileM), np = roundUp(p->n, kTileN), kp = roundUp(p->k, kTileK);
  // Padding costs tensor-core work. TF32 mma does 8x the multiply-adds of f32 FMA (A100: 156
  // vs 19.5 TFLOP/s; H100: 495 vs 67); past 4x the useful work the FMA path is kept.
  if (mp * np * kp > 4 * p->m * p->n * p->k)
    return false;
  std::optional<WarpGrid> grid = chooseWarps(mp / kTileM, np / kTileN, std::max<int64_t>(maxWarps, 1));
  if (!grid)
    return false;
  Location loc = p->forall.getLoc();
  OpBuilder &b = rewriter;
  OpBuilder::InsertionGuard guard(b);
  p->a = padAgainstBankConflicts(rewriter, *p, /*isA=*/true);
  p->b = padAgainstBankConflicts(rewriter, *p, /*isA=*/false);
  b.setInsertionPointToStart(&gfn.getBody().front());
  auto frag = memref::AllocaOp::create(b, loc, MemRefType::get({grid->tilesM, grid->tilesN, 4}, b.getF32Type()));
  frag->setAttr(kCudaThreadPrivateAttrName, b.getUnitAttr());
  Emitter e{b, loc, *p, *grid, frag};
  b.setInsertionPoint(p->steps);
  e.moveAccumulators(/*toShared=*/false);
  b.setInsertionPointAfter(p->steps);
  e.moveAccumulators(/*toShared=*/true);
  b.setInsertionPoint(p->forall);
  e.accumulate();
  rewriter.eraseOp(p->forall);
  return true;
}

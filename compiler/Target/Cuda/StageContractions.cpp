//===- StageContractions.cpp - matmul and convolution tiles in shared memory -===//
//
// A kernel whose work is one contraction (a matmul, a batched matmul, a convolution) with an
// initializer and an elementwise epilogue gets the classic shared-memory structure instead of
// one thread per output element: each thread block computes a tile of the output, walking the
// reduction in steps; every step the block's threads copy the input tiles it needs into
// shared memory together, then each thread accumulates its sub-tile from there. Each input
// element is read from global memory once per block, not once per output element.
//
// On tensors, with upstream tiling: the result is tiled to blocks (an scf.forall mapped to
// #gpu.block), the contraction's last reduction loop to steps (scf.for), its input tiles and
// its accumulator are bufferization.alloc_tensor in workgroup memory, and every op inside a
// block is tiled to threads (scf.forall mapped to #gpu.thread). The outliner turns the thread
// foralls into block-strided loops separated by barriers; all state that crosses a barrier is
// in shared memory, so the emulator can run a block's threads loop by loop.
//
//===----------------------------------------------------------------------===//
#include "Target/Cuda/Passes.h"
#include "Dialect/Functions.h"
#include "Target/Cuda/BlockTiling.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"

#include <numeric>

namespace mlir::hexir {
#define GEN_PASS_DEF_STAGECONTRACTIONS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Shapes of a block's tile. Outputs per block at most 4096 (16 per thread of 256), fewer when
// that would leave less than one block for each of the GPU's 128 or so multiprocessors (132 on
// an H200, 108 on an A100), but at least 256; each output dimension's tile at most 64; the
// last reduction loop in steps of at most 16; the block's shared memory (accumulator and one
// step's input tiles) at most 40 KiB, under the 48 KiB a block may declare statically. A tile
// divides its loop's extent, so every shape is static.
constexpr int64_t kMaxBlockOutputs = 4096;
constexpr int64_t kBlockOutputsFloor = 256;
constexpr int64_t kMultiprocessors = 128;
constexpr int64_t kMaxTileExtent = 64;
// An extent whose largest divisor up to 64 is below this may take a tile that does not divide it.
constexpr int64_t kMinShiftedTile = 8;
constexpr int64_t kMaxReductionStep = 16;
constexpr int64_t kMinStep = 4;
constexpr int64_t kMaxSharedBytes = 40 * 1024;
// Staging pays when a block reuses its input tiles: at least this many outputs per block and
// this much reduction per output; smaller contractions keep one thread per output element.
constexpr int64_t kMinBlockOutputs = 64;
constexpr int64_t kMinReduction = 16;
constexpr int64_t kMinWindowReduction = 9;
// ... and every input tile read by at least this many of the block's outputs (a matrix times a
// vector reuses nothing of the matrix).
constexpr int64_t kMinReuse = 4;
// Threads that accumulate a block's tile (each its own sub-tile of the accumulator).
constexpr int64_t kThreadsPerBlock = 256;

// The coefficient of each loop in `e`, an affine function of the loops with non-negative
// coefficients (as every contraction's and convolution's indexing is: d1 * stride + d4 *
// dilation); nullopt for anything else a constant evaluation cannot tell.
std::optional<SmallVector<int64_t>> loopCoefficients(AffineExpr e, unsigned loops) {
  MLIRContext *ctx = e.getContext();
  auto at = [&](std::optional<unsigned> one) -> std::optional<int64_t> {
    SmallVector<AffineExpr> point;
    for (unsigned d = 0; d < loops; ++d)
      point.push_back(getAffineConstantExpr(one == d ? 1 : 0, ctx));
    auto value = dyn_cast<AffineConstantExpr>(e.replaceDims(point));
    return value ? std::optional<int64_t>(value.getValue()) : std::nullopt;
  };
  std::optional<int64_t> origin = at(std::nullopt);
  SmallVector<int64_t> coefficients;
  for (unsigned d = 0; d < loops; ++d) {
    std::optional<int64_t> value = at(d);
    if (!origin || !value || *value < *origin)
      return std::nullopt;
    coefficients.push_back(*value - *origin);
  }
  return coefficients;
}

// Any reduction whose every input the body reads: stepping the reduction keeps each output's
// order of accumulation, so whatever the body computes (a matmul, a convolution, a scaled
// product) is unchanged. The reuse test below leaves out what has nothing to share (a row sum).
bool isStagedKind(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1 || op.getNumLoops() > 10)
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) { return op.payloadUsesValueFromOperand(in); });
}

// What a staged kernel looks like: its contraction, the op computing its one result (the
// contraction or the last op of its epilogue), and the tile of each of the contraction's
// loops (parallel loops: the block's tile; the last reduction loop: the step; others whole).
struct Staging {
  linalg::LinalgOp contraction;
  linalg::LinalgOp root;
  SmallVector<int64_t> blockTile;  // per loop of the contraction; 0 for reductions
  SmallVector<int64_t> stepTile;   // per loop: 0 except the stepped reduction loop
  // Whether a block may recompute outputs of its neighbour (shiftLastTiles): not where the
  // output may be written over an input the blocks read (a binding that is a linalg op's
  // init, which the planner may update in place: InPlaceAnalysis.h).
  bool shiftable = false;
};

// The block tile and the step of a matched kernel; false when no tile reuses enough to pay.
bool chooseTiles(Staging &s, int64_t sharedCapacity) {
  linalg::LinalgOp c = s.contraction;
  auto outType = cast<RankedTensorType>(c->getResult(0).getType());
  AffineMap outMap = c.getMatchingIndexingMap(c.getDpsInitOperand(0));
  SmallVector<int64_t> ranges = c.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = c.getIteratorTypesArray();
  unsigned loops = ranges.size();
  int64_t reduction = 1;
  std::optional<unsigned> stepped;
  for (unsigned d = 0; d < loops; ++d)
    if (iterators[d] == utils::IteratorType::reduction) {
      reduction *= ranges[d];
      stepped = d;
    }
  SmallVector<unsigned> parallel;
  for (unsigned d = 0; d < loops; ++d)
    if (iterators[d] == utils::IteratorType::parallel)
      parallel.push_back(d);

  // Each input's indexing as linear forms of the loops (contractions and convolutions index
  // with sums of loops times non-negative constants): a tile's extent along a result is then
  // 1 + sum of coefficient x (tile - 1).
  struct Input {
    SmallVector<SmallVector<int64_t>> coefficients;  // per result, per loop
    SmallVector<bool> uses;                          // per loop: whether the input's indexing uses it
    int64_t bytes;
  };
  SmallVector<Input> inputs;
  for (OpOperand *in : c.getDpsInputOperands()) {
    AffineMap map = c.getMatchingIndexingMap(in);
    Input input;
    input.bytes = (getElementTypeOrSelf(in->get().getType()).getIntOrFloatBitWidth() + 7) / 8;
    for (unsigned d = 0; d < loops; ++d)
      input.uses.push_back(map.isFunctionOfDim(d));
    for (AffineExpr e : map.getResults()) {
      std::optional<SmallVector<int64_t>> coefficients = loopCoefficients(e, loops);
      if (!coefficients)
        return false;
      input.coefficients.push_back(std::move(*coefficients));
    }
    inputs.push_back(std::move(input));
  }
  // A window (an input index that sums a parallel and a reduction loop: a convolution's) shares
  // its inputs between neighbouring outputs: a 3x3 one pays with 9 products per output.
  bool window = llvm::any_of(inputs, [&](const Input &input) {
    return llvm::any_of(input.coefficients, [&](ArrayRef<int64_t> c) {
      bool p = false, r = false;
      for (unsigned d = 0; d < loops; ++d)
        if (c[d] != 0)
          (iterators[d] == utils::IteratorType::reduction ? r : p) = true;
      return p && r;
    });
  });
  if (reduction < (window ? kMinWindowReduction : kMinReduction))
    return false;
  int64_t outBytes = (outType.getElementTypeBitWidth() + 7) / 8;
  // The shared memory of a tile (`sizes` per loop: the block's tile, the step, the whole
  // extent of the other reductions): the accumulator and one step's tile of each input.
  auto tileElements = [&](const Input &input, ArrayRef<int64_t> sizes) {
    int64_t elements = 1;
    for (ArrayRef<int64_t> coefficients : input.coefficients) {
      int64_t extent = 1;
      for (unsigned d = 0; d < loops; ++d)
        extent += coefficients[d] * (sizes[d] - 1);
      elements *= extent;
    }
    return elements;
  };
  auto sharedBytes = [&](ArrayRef<int64_t> sizes, int64_t outputs) {
    int64_t bytes = outputs * outBytes;
    for (const Input &input : inputs)
      bytes += tileElements(input, sizes) * input.bytes;
    return bytes;
  };
  // The outputs of a block that read one element of an input: those along the parallel loops
  // its indexing does not use.
  auto reuse = [&](ArrayRef<int64_t> sizes) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const Input &input : inputs) {
      int64_t n = 1;
      for (unsigned d : parallel)
        if (!input.uses[d])
          n *= sizes[d];
      least = std::min(least, n);
    }
    return least;
  };

  // The same, counting a window's overlap (what a depthwise convolution has and nothing else
  // of it): the reads of an input's elements by the block's outputs over the reduction loops
  // it uses, per element of its tile. For an input indexed by loops alone it equals `reuse`.
  auto windowReuse = [&](ArrayRef<int64_t> sizes, int64_t outputs) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const Input &input : inputs) {
      int64_t reads = outputs;
      for (unsigned d = 0; d < loops; ++d)
        if (iterators[d] == utils::IteratorType::reduction && input.uses[d])
          reads *= sizes[d];
      least = std::min(least, reads / std::max<int64_t>(tileElements(input, sizes), 1));
    }
    return least;
  };

  // The block's tile: of the divisors (at most 64) of each parallel loop, the combination with
  // at most the block's share of the outputs whose least reused input is reused most, then
  // with the most outputs, then with the longest step, then the widest along the output's
  // dimensions innermost first (adjacent threads, adjacent addresses), among those that fit in
  // shared memory.
  int64_t budget = std::clamp(outType.getNumElements() / kMultiprocessors, kBlockOutputsFloor, kMaxBlockOutputs);
  SmallVector<SmallVector<int64_t>> candidates;
  for (unsigned d : parallel) {
    SmallVector<int64_t> divisors;
    for (int64_t t = 1; t <= std::min(ranges[d], kMaxTileExtent); ++t)
      if (ranges[d] % t == 0)
        divisors.push_back(t);
    // An extent with no divisor from 8 to 64 (197 tokens; a prime) also takes tiles that do not
    // divide it, where the blocks' surplus is at most a quarter of it: the last block is shifted
    // back to end at the extent (shiftLastTiles), recomputing some of its neighbour's outputs.
    if (s.shiftable && divisors.back() < kMinShiftedTile)
      for (int64_t t : {16, 32, 64})
        if (t < ranges[d] && ranges[d] % t != 0 && ((ranges[d] + t - 1) / t * t - ranges[d]) * 4 <= ranges[d])
          divisors.push_back(t);
    candidates.push_back(std::move(divisors));
  }
  // Steps: divisors of the stepped loop up to 16, at least 4 unless the loop is shorter. A loop
  // with none (a prime 17 channels: steps of 1 would cost three barriers per channel) is one
  // step of its whole extent up to 64, where that fits in shared memory.
  SmallVector<int64_t> steps;
  for (int64_t t = std::min(ranges[*stepped], kMaxReductionStep); t >= std::min<int64_t>(ranges[*stepped], kMinStep); --t)
    if (ranges[*stepped] % t == 0)
      steps.push_back(t);
  if (steps.empty() && ranges[*stepped] <= kMaxTileExtent)
    steps.push_back(ranges[*stepped]);
  // The best tile and its score (reuse, outputs, the step, then the tile along each output
  // dimension) under a reuse measure.
  auto search = [&](auto reuseOf, SmallVector<int64_t> &best, SmallVector<int64_t> &bestScore) {
    SmallVector<int64_t> sizes(loops);
    for (int64_t step : steps) {
      for (unsigned d = 0; d < loops; ++d)
        sizes[d] = d == *stepped ? step : ranges[d];
      // Every combination, as a counter over the candidate lists.
      SmallVector<size_t> pick(parallel.size(), 0);
      while (true) {
        int64_t outputs = 1;
        for (auto [k, d] : llvm::enumerate(parallel)) {
          sizes[d] = candidates[k][pick[k]];
          outputs *= sizes[d];
        }
        if (outputs <= budget && sharedBytes(sizes, outputs) <= sharedCapacity) {
          SmallVector<int64_t> score{reuseOf(sizes, outputs), outputs, step};
          for (unsigned r = outMap.getNumResults(); r-- > 0;)
            score.push_back(sizes[outMap.getDimPosition(r)]);
          if (score > bestScore) {
            bestScore = score;
            best = sizes;
          }
        }
        unsigned k = 0;
        while (k < pick.size() && ++pick[k] == candidates[k].size())
          pick[k++] = 0;
        if (k == pick.size())
          break;
      }
    }
  };
  SmallVector<int64_t> best, bestScore;
  search([&](ArrayRef<int64_t> sizes, int64_t) { return reuse(sizes); }, best, bestScore);
  // Where no tile reaches kMinReuse so, a window's reuse (a depthwise convolution: each output
  // its own channel, but an input pixel read by the kh x kw outputs around it), counted up to
  // kMinReuse only: past it the widest tile along the innermost dimension wins (a depthwise
  // convolution's channels: whole sectors).
  if (window && (best.empty() || bestScore[0] < kMinReuse || bestScore[1] < kMinBlockOutputs)) {
    best.clear();
    bestScore.clear();
    search([&](ArrayRef<int64_t> sizes, int64_t outputs) { return std::min(windowReuse(sizes, outputs), kMinReuse); },
           best, bestScore);
  }
  if (best.empty() || bestScore[0] < kMinReuse || bestScore[1] < kMinBlockOutputs)
    return false;
  s.blockTile.assign(loops, 0);
  s.stepTile.assign(loops, 0);
  for (unsigned d : parallel)
    s.blockTile[d] = best[d];
  s.stepTile[*stepped] = bestScore[2];
  return true;
}

// Whether the kernel has the shape this pass stages, and with which tiles.
std::optional<Staging> analyze(func::FuncOp fn, int64_t sharedCapacity) {
  std::optional<ReductionKernel> k = matchReductionKernel(fn);
  if (!k || !isStagedKind(k->reduction))
    return std::nullopt;
  Staging s{k->reduction, k->root, {}, {}};
  s.shiftable = true;
  fn.walk([&](linalg::LinalgOp op) {
    if (llvm::any_of(op.getDpsInits(), [](Value v) { return isa<BlockArgument>(v); }))
      s.shiftable = false;
  });
  if (!chooseTiles(s, sharedCapacity))
    return std::nullopt;
  return s;
}

// The accumulating op's sub-tile per thread: output dimensions innermost first share the
// block's threads (at most 16 along one, so that a thread's sub-tile has rows and columns to
// reuse its loads), each thread the rest of its dimension; then, if fewer than 256 threads (or
// one per output) have work, the sub-tiles split further.
SmallVector<int64_t> accumulatorTile(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<int64_t> sizes(ranges.size(), 0);
  int64_t threads = 1, outputs = 1;
  for (unsigned r = outMap.getNumResults(); r-- > 0;) {
    unsigned d = outMap.getDimPosition(r);
    int64_t along = largestDivisorAtMost(ranges[d], std::min<int64_t>(16, kThreadsPerBlock / threads));
    threads *= along;
    outputs *= ranges[d];
    sizes[d] = ranges[d] / along;
  }
  int64_t wanted = std::min(kThreadsPerBlock, outputs);
  for (unsigned r = outMap.getNumResults(); r-- > 0 && threads < wanted;) {
    unsigned d = outMap.getDimPosition(r);
    int64_t more = largestDivisorAtMost(sizes[d], wanted / threads);
    threads *= more;
    sizes[d] /= more;
  }
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (iterators[d] == utils::IteratorType::parallel && sizes[d] == 0)
      sizes[d] = ranges[d];
  return sizes;
}

// Elements of a vector copy: 4 x 32 bits, one ld.global.v4 / st.shared.v4 (OutlineGpuKernels
// vectorizes the copies a staged kernel tiled so).
constexpr int64_t kCopyVector = 4;

// What `v` is known to be a multiple of (an index computed from constants, loop induction
// variables and affine maps of them); 1 when nothing is known.
int64_t knownDivisor(Value v, int depth = 0) {
  if (depth > 8)
    return 1;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c == 0 ? int64_t{1} << 30 : std::abs(*c);
  auto gcdOf = [](int64_t a, int64_t b) { return std::gcd(a, b); };
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto loop = dyn_cast<scf::ForOp>(owner); loop && arg == loop.getInductionVar())
      return gcdOf(knownDivisor(loop.getLowerBound(), depth + 1), knownDivisor(loop.getStep(), depth + 1));
    if (auto loop = dyn_cast<scf::ForallOp>(owner); loop && arg.getArgNumber() < loop.getRank()) {
      unsigned d = arg.getArgNumber();
      auto of = [&](OpFoldResult r) {
        if (std::optional<int64_t> c = getConstantIntValue(r))
          return *c == 0 ? int64_t{1} << 30 : std::abs(*c);
        return knownDivisor(cast<Value>(r), depth + 1);
      };
      return gcdOf(of(loop.getMixedLowerBound()[d]), of(loop.getMixedStep()[d]));
    }
    return 1;
  }
  // An affine.apply (one result) or affine.min (every result: a shifted block's offset,
  // min(iv, extent - tile)): what each result's expression of its operands is a multiple of.
  auto mapDivisor = [&](AffineMap map, ValueRange operands) {
    std::function<int64_t(AffineExpr)> expr = [&](AffineExpr e) -> int64_t {
      if (auto c = dyn_cast<AffineConstantExpr>(e))
        return c.getValue() == 0 ? int64_t{1} << 30 : std::abs(c.getValue());
      if (auto d = dyn_cast<AffineDimExpr>(e))
        return knownDivisor(operands[d.getPosition()], depth + 1);
      if (auto sym = dyn_cast<AffineSymbolExpr>(e))
        return knownDivisor(operands[map.getNumDims() + sym.getPosition()], depth + 1);
      auto bin = cast<AffineBinaryOpExpr>(e);
      if (e.getKind() == AffineExprKind::Add)
        return gcdOf(expr(bin.getLHS()), expr(bin.getRHS()));
      if (e.getKind() == AffineExprKind::Mul)
        return std::min<int64_t>(expr(bin.getLHS()) * expr(bin.getRHS()), int64_t{1} << 30);
      return 1;
    };
    int64_t all = 0;
    for (AffineExpr e : map.getResults())
      all = gcdOf(all, expr(e));
    return all ? all : int64_t{1};
  };
  if (auto apply = v.getDefiningOp<affine::AffineApplyOp>())
    return apply.getAffineMap().getNumResults() == 1 ? mapDivisor(apply.getAffineMap(), apply.getMapOperands()) : 1;
  if (auto min = v.getDefiningOp<affine::AffineMinOp>())
    return mapDivisor(min.getAffineMap(), min.getMapOperands());
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return std::min<int64_t>(knownDivisor(mul.getLhs(), depth + 1) * knownDivisor(mul.getRhs(), depth + 1),
                             int64_t{1} << 30);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return gcdOf(knownDivisor(add.getLhs(), depth + 1), knownDivisor(add.getRhs(), depth + 1));
  return 1;
}

// Whether a step's copy into shared memory can move 4 elements a thread as one 16-byte vector:
// 32-bit elements, its innermost extent a multiple of 4, and its source a slice of a binding
// whose innermost dimension is a multiple of 4 long (every row starts 16 bytes aligned:
// bindings do, serializer::kCudaBindingAlignment) at an innermost offset that is a multiple of
// 4, through every slice between them. The emulator checks every such access.
bool copiesVectors(linalg::CopyOp copy) {
  auto type = dyn_cast<RankedTensorType>(copy.getInputs()[0].getType());
  if (!type || type.getRank() == 0 || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() != 32 || type.getShape().back() % kCopyVector != 0)
    return false;
  Value v = copy.getInputs()[0];
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    OpFoldResult offset = slice.getMixedOffsets().back(), stride = slice.getMixedStrides().back();
    std::optional<int64_t> unit = getConstantIntValue(stride);
    int64_t divisor = getConstantIntValue(offset) ? std::max<int64_t>(std::abs(*getConstantIntValue(offset)), 0)
                                                  : knownDivisor(cast<Value>(offset));
    if (!unit || *unit != 1 || (divisor != 0 && divisor % kCopyVector != 0))
      return false;
    v = slice.getSource();
  }
  auto binding = dyn_cast<RankedTensorType>(v.getType());
  return isa<BlockArgument>(v) && binding && binding.getShape().back() % kCopyVector == 0;
}

// A block forall whose tile does not divide a dimension (chooseTiles allows that where nothing
// between 8 and 64 divides it) gets static tiles again: each block's offset along it becomes
// min(offset, extent - tile), so the last block ends at the extent and every block is a whole
// tile; the tile sizes upstream tiling computed (min(tile, extent - offset)) are then the tile.
// Two blocks write the outputs they share with the same values, computed the same way, and
// neither reads an output (the accumulator starts as its own tensor, a Gemm's C as a copy).
LogicalResult shiftLastTiles(RewriterBase &rewriter, scf::ForallOp forall) {
  std::optional<SmallVector<OpFoldResult>> lbs = forall.getLoopLowerBounds(),
                                           ubs = forall.getLoopUpperBounds(), steps = forall.getLoopSteps();
  if (!lbs || !ubs || !steps)
    return failure();
  for (unsigned k = 0; k < forall.getRank(); ++k) {
    std::optional<int64_t> lb = getConstantIntValue((*lbs)[k]), ub = getConstantIntValue((*ubs)[k]),
                           step = getConstantIntValue((*steps)[k]);
    if (!lb || !ub || !step || *lb != 0 || *step <= 0)
      return failure();
    if (*ub % *step == 0)
      continue;
    int64_t extent = *ub, tile = *step;
    Value iv = forall.getInductionVar(k);
    SmallVector<int64_t> offsets;
    for (int64_t o = 0; o < extent; o += tile)
      offsets.push_back(std::min(o, extent - tile));
    for (Operation *user : llvm::make_early_inc_range(iv.getUsers())) {
      auto min = dyn_cast<affine::AffineMinOp>(user);
      if (!min || min.getMapOperands().size() != 1)
        continue;
      // A size that is the whole tile at every shifted offset.
      bool whole = llvm::all_of(offsets, [&](int64_t o) {
        SmallVector<int64_t> values;
        for (AffineExpr e : min.getAffineMap().getResults()) {
          auto c = dyn_cast<AffineConstantExpr>(
              e.replaceDimsAndSymbols({getAffineConstantExpr(o, rewriter.getContext())}, {}));
          values.push_back(c ? c.getValue() : -1);
        }
        return *llvm::min_element(values) == tile;
      });
      if (whole) {
        rewriter.setInsertionPoint(min);
        rewriter.replaceOp(min, arith::ConstantIndexOp::create(rewriter, min.getLoc(), tile).getResult());
      }
    }
    rewriter.setInsertionPointToStart(forall.getBody());
    AffineExpr d0 = rewriter.getAffineDimExpr(0);
    auto shifted = affine::AffineMinOp::create(
        rewriter, forall.getLoc(), AffineMap::get(1, 0, {d0, rewriter.getAffineConstantExpr(extent - tile)},
                                                  rewriter.getContext()),
        ValueRange{iv});
    rewriter.replaceAllUsesExcept(iv, shifted.getResult(), shifted);
  }
  // The slices' sizes are constants now: static types again.
  // (The ops inside the block only, and not scf's: the forall itself stays as it is.)
  RewritePatternSet patterns(rewriter.getContext());
  for (Dialect *dialect : rewriter.getContext()->getLoadedDialects())
    if (llvm::is_contained({"tensor", "linalg", "affine", "arith"}, dialect->getNamespace()))
      dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : rewriter.getContext()->getRegisteredOperations())
    if (llvm::is_contained({"tensor", "linalg", "affine", "arith"}, op.getDialectNamespace()))
      op.getCanonicalizationPatterns(patterns, rewriter.getContext());
  if (failed(applyPatternsGreedily(forall.getRegion(), std::move(patterns))))
    return failure();
  bool dynamic = false;
  forall.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto shaped = dyn_cast<ShapedType>(t); shaped && !shaped.hasStaticShape())
        dynamic = true;
  });
  return failure(dynamic);
}

LogicalResult stage(func::FuncOp fn, Staging s) {
  MLIRContext *ctx = fn.getContext();
  IRRewriter rewriter(ctx);
  Location loc = s.contraction.getLoc();

  // 0. An accumulator that starts as a binding (C of a Gemm) starts as a copy of it: the copy
  // is the initializer, and the blocks write a new tensor, not over the read-only binding.
  if (!s.contraction.getDpsInitOperand(0)->get().getDefiningOp<linalg::LinalgOp>()) {
    OpOperand *init = s.contraction.getDpsInitOperand(0);
    rewriter.setInsertionPoint(s.contraction);
    auto type = cast<RankedTensorType>(init->get().getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    auto copy = linalg::CopyOp::create(rewriter, loc, init->get(), empty);
    rewriter.modifyOpInPlace(s.contraction, [&] { init->set(copy->getResult(0)); });
  }

  // 1. Blocks: the result's tile, the contraction, its initializer and the epilogue fused in.
  SmallVector<int64_t> rootTile;
  if (s.root == s.contraction) {
    rootTile = s.blockTile;
  } else {
    AffineMap outMap = s.contraction.getMatchingIndexingMap(s.contraction.getDpsInitOperand(0));
    for (unsigned r = 0; r < outMap.getNumResults(); ++r)
      rootTile.push_back(s.blockTile[outMap.getDimPosition(r)]);
  }
  FailureOr<scf::ForallOp> blocks = tileToBlocks(rewriter, s.root, rootTile);
  if (failed(blocks))
    return failure();
  scf::ForallOp forall = *blocks;
  if (failed(shiftLastTiles(rewriter, forall)))
    return forall.emitError("the CUDA target cannot shift the last block of a tile that does not divide its loop");
  linalg::LinalgOp contraction, root;
  forall.getBody()->walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() > 0)
      contraction = op;
  });
  for (auto linalgOp : forall.getBody()->getOps<linalg::LinalgOp>())
    if (llvm::any_of(linalgOp->getUsers(), [](Operation *u) { return isa<tensor::ParallelInsertSliceOp>(u); }))
      root = linalgOp;
  if (!contraction || !root || contraction.hasDynamicShape())
    return forall.emitError("internal error: the block tile of a staged contraction");
  bool rootIsContraction = root == contraction;

  // 2. The accumulator in shared memory: the initializer writes it there.
  OpOperand *acc = contraction.getDpsInitOperand(0);
  auto accType = cast<RankedTensorType>(acc->get().getType());
  linalg::LinalgOp init = acc->get().getDefiningOp<linalg::LinalgOp>();
  rewriter.setInsertionPoint(contraction);
  Value sharedAcc = sharedTensor(rewriter, loc, accType);
  // An initializer that reads its output (beta * C) keeps it, and its result is copied in.
  if (init && init->hasOneUse() && init->getParentOp() == forall &&
      !init.payloadUsesValueFromOperand(init.getDpsInitOperand(0))) {
    rewriter.setInsertionPoint(init);
    rewriter.modifyOpInPlace(init, [&] { init.getDpsInitOperand(0)->set(sharedAcc); });
    sharedAcc.getDefiningOp()->moveBefore(init);
  } else {
    init = linalg::CopyOp::create(rewriter, loc, acc->get(), sharedAcc);
    rewriter.modifyOpInPlace(contraction, [&] { acc->set(init->getResult(0)); });
  }

  // 3. Steps along the last reduction loop.
  scf::SCFTilingOptions stepTiling;
  stepTiling.setTileSizes(getAsIndexOpFoldResult(ctx, s.stepTile));
  stepTiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(contraction);
  FailureOr<scf::SCFTilingResult> steps =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(contraction.getOperation()), stepTiling);
  if (failed(steps))
    return contraction->emitError("the CUDA target cannot step this contraction's reduction");
  rewriter.replaceOp(contraction, steps->replacements);
  auto step = cast<linalg::LinalgOp>(steps->tiledOps.back());

  // 4. Each step's input tiles copied to shared memory.
  SmallVector<linalg::CopyOp> copies;
  for (OpOperand *in : step.getDpsInputOperands()) {
    rewriter.setInsertionPoint(step);
    auto type = cast<RankedTensorType>(in->get().getType());
    auto copy = linalg::CopyOp::create(rewriter, loc, in->get(), sharedTensor(rewriter, loc, type));
    copies.push_back(copy);
    rewriter.modifyOpInPlace(step, [&] { in->set(copy->getResult(0)); });
  }

  // 5. The block's result written from the accumulator by its threads (the epilogue does it).
  Value blockResult = steps->replacements.front();
  if (rootIsContraction) {
    auto insert = cast<tensor::ParallelInsertSliceOp>(*llvm::find_if(
        blockResult.getUsers(), [](Operation *u) { return isa<tensor::ParallelInsertSliceOp>(u); }));
    rewriter.setInsertionPoint(forall.getTerminator());
    auto slice = tensor::ExtractSliceOp::create(rewriter, loc, accType, insert.getDest(), insert.getMixedOffsets(),
                                                insert.getMixedSizes(), insert.getMixedStrides());
    auto out = linalg::CopyOp::create(rewriter, loc, blockResult, slice.getResult());
    rewriter.modifyOpInPlace(insert, [&] { insert.getSourceMutable().set(out->getResult(0)); });
    root = out;
  }

  // 6. Threads: the accumulation a sub-tile each; the initializer and the epilogue (with their
  // producers: a broadcast bias scaled, the initializer a copy reads) the same sub-tile of the
  // accumulator, so that each thread touches only its own (the outliner then keeps it in
  // registers: ThreadPrivate.h); the copies one element (or one vector) an iteration.
  SmallVector<int64_t> stepSubTile = accumulatorTile(step);
  AffineMap accMap = step.getMatchingIndexingMap(step.getDpsInitOperand(0));
  // Both are elementwise over the accumulator's shape, their result indexed by the identity
  // (matchReductionKernel): their loops are the accumulator's dimensions.
  auto accumulatorSubTile = [&](linalg::LinalgOp op) {
    SmallVector<int64_t> sizes(op.getNumLoops(), 0);
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    for (unsigned r = 0; r < accMap.getNumResults() && r < outMap.getNumResults(); ++r)
      sizes[outMap.getDimPosition(r)] = stepSubTile[accMap.getDimPosition(r)];
    return sizes;
  };
  if (failed(tileToThreads(rewriter, cast<TilingInterface>(init.getOperation()), accumulatorSubTile(init),
                           /*fuse=*/true)))
    return failure();
  for (linalg::CopyOp copy : copies) {
    SmallVector<int64_t> sizes = elementTile(cast<TilingInterface>(copy.getOperation()));
    // 4 elements a thread where every 4 start 16 bytes into their binding: one 128-bit load.
    if (copiesVectors(copy))
      sizes.back() = kCopyVector;
    if (failed(tileToThreads(rewriter, cast<TilingInterface>(copy.getOperation()), sizes, /*fuse=*/false)))
      return failure();
  }
  if (failed(tileToThreads(rewriter, cast<TilingInterface>(step.getOperation()), stepSubTile, /*fuse=*/false)))
    return failure();
  if (failed(tileToThreads(rewriter, cast<TilingInterface>(root.getOperation()), accumulatorSubTile(root),
                           /*fuse=*/true)))
    return failure();

  return finishBlocks(rewriter, fn, forall);
}

struct StageContractionsPass : public mlir::hexir::impl::StageContractionsBase<StageContractionsPass> {
  using StageContractionsBase::StageContractionsBase;

  void runOnOperation() override {
    int64_t sharedCapacity = capacity ? std::min<int64_t>(kMaxSharedBytes, capacity) : kMaxSharedBytes;
    SmallVector<func::FuncOp> kernels = kernelFunctions(getOperation());
    for (func::FuncOp fn : kernels) {
      // An epilogue reading the contraction twice (a GELU's x * (1 + erf(x))) reads it once.
      RewritePatternSet patterns(&getContext());
      linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return signalPassFailure();
      if (!analyze(fn, sharedCapacity))
        continue;
      // Staged on a copy: a kernel whose staging fails half-way (upstream tiling refusing a
      // shape the analysis let through) stays as it was, for TileToThreads, and compiles.
      OpBuilder b(fn);
      b.setInsertionPointAfter(fn);
      auto copy = cast<func::FuncOp>(b.clone(*fn));
      std::optional<Staging> staging = analyze(copy, sharedCapacity);
      bool staged;
      {
        ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &) { return success(); });
        staged = staging && succeeded(stage(copy, *staging));
      }
      if (staged)
        fn.erase();
      else
        copy.erase();
    }
  }
};

} // namespace

//===- SplitReductions.cpp - a reduction shared by the threads of a block -===//
//
// One thread per output element runs a reduction sequentially: a global average pool of 16
// channels over 56x56 pixels was 16 threads of one block reading 3,136 values each (1.14 ms on
// an H200, most of mobilenet_v3_small's time). Where the outputs are too few to fill the GPU
// and each reduces many values, the reduction is split: S threads share each output, thread s
// reducing every S-th step of one reduction loop into a partial in shared memory (from the
// combiner's neutral element: 0 for a sum, -inf for a max), and after a barrier one thread per
// output combines the S partials with the accumulator's initial value and runs the epilogue.
//
// On tensors, before TileToThreads: the reduction becomes a partial op (its reduction loop d
// split into d / S steps and a parallel loop s of S threads: its inputs expanded along d as
// [d / S][S], so thread s reads elements s, s + S, ...; adjacent threads adjacent elements when
// d is contiguous in memory) and a final op reducing s; the result is tiled to blocks of P
// outputs (P * S <= 256 threads), the partial's tile accumulating into a shared tensor, each op
// of a block tiled to threads as StageContractions does (BlockTiling.h).
//
//===----------------------------------------------------------------------===//
#include "Target/Cuda/BlockTiling.h"
#include "Dialect/Functions.h"
#include "Target/Cuda/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Threads a GPU keeps busy: 132 multiprocessors of an H200 x 2,048 resident threads is about
// 270,000; a kernel with a quarter of that in threads of its own is left as it is.
constexpr int64_t kEnoughThreads = 65536;
// Values each output reduces below which one thread per output is fast enough.
constexpr int64_t kMinReduction = 128;
// Steps of the split loop each thread takes at least, and threads per output at least.
constexpr int64_t kMinStepsPerThread = 4;
constexpr int64_t kMinThreadsPerOutput = 4;
constexpr int64_t kThreadsPerBlock = 256;
// Outputs whose values fill one 32-byte sector of memory, and the GPU's multiprocessors (132 on
// an H200, 108 on an A100): blocks of that many outputs where at least this many blocks remain.
constexpr int64_t kSectorOutputs = 8;
constexpr int64_t kMultiprocessors = 128;
// Marks the partial op until the block's threads are tiled.
constexpr llvm::StringLiteral kPartialAttr = "hexir.cuda_partial_reduction";

// The combining op of a reduction's body, `yield comb(out, x)` with the accumulator read there
// only, and its neutral element; an associative and commutative one, so that partials may be
// combined in any grouping.
struct Combiner {
  Operation *op;
  TypedAttr neutral;
};

std::optional<Combiner> combinerOf(linalg::LinalgOp r) {
  Block &body = r->getRegion(0).front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return std::nullopt;
  Operation *comb = yield.getOperand(0).getDefiningOp();
  if (!comb || comb->getBlock() != &body || comb->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
           arith::AddIOp, arith::MulIOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(comb))
    return std::nullopt;
  BlockArgument out = r.getMatchingBlockArgument(r.getDpsInitOperand(0));
  if (!out.hasOneUse() || !llvm::is_contained(comb->getOperands(), Value(out)))
    return std::nullopt;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(comb);
  if (!neutral)
    return std::nullopt;
  return Combiner{comb, *neutral};
}

// How a reduction is split: its reduction loops `group` (consecutive and in the same order in
// every input that reads them: a pool's rows and columns) taken as one loop of their product,
// split into steps of `threads` (S); blocks of `blockTile` outputs per output dimension; the
// threads of an output fastest when `threadsInner`.
struct Split {
  SmallVector<unsigned> group;
  int64_t extent;
  int64_t threads;
  bool threadsInner;
  SmallVector<int64_t> blockTile;  // per output dimension of the reduction
};

// Where `group` sits in `map`: the position of its first loop, if its loops are consecutive
// results in that order; -1 if the map reads none of them; nullopt if it reads some apart.
std::optional<int64_t> groupPosition(AffineMap map, ArrayRef<unsigned> group) {
  std::optional<unsigned> first = map.getResultPosition(getAffineDimExpr(group.front(), map.getContext()));
  if (!first)
    return llvm::none_of(group, [&](unsigned d) { return map.isFunctionOfDim(d); }) ? std::optional<int64_t>(-1)
                                                                                     : std::nullopt;
  for (auto [k, d] : llvm::enumerate(group))
    if (*first + k >= map.getNumResults() || map.getDimPosition(*first + k) != d)
      return std::nullopt;
  return *first;
}

std::optional<Split> chooseSplit(linalg::LinalgOp r) {
  SmallVector<int64_t> ranges = r.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = r.getIteratorTypesArray();
  Block &body = r->getRegion(0).front();
  if (!body.getOps<linalg::IndexOp>().empty() ||
      !llvm::all_of(r.getIndexingMapsArray(), [](AffineMap m) { return m.isProjectedPermutation(); }))
    return std::nullopt;
  int64_t outputs = 1, reduced = 1;
  SmallVector<unsigned> reductions;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (iterators[d] == utils::IteratorType::parallel) {
      outputs *= ranges[d];
    } else {
      reduced *= ranges[d];
      reductions.push_back(d);
    }
  }
  if (reductions.empty() || reduced < kMinReduction || outputs >= kEnoughThreads)
    return std::nullopt;
  auto groupable = [&](ArrayRef<unsigned> group) {
    return llvm::all_of(r.getDpsInputOperands(), [&](OpOperand *in) {
      return groupPosition(r.getMatchingIndexingMap(in), group).has_value();
    });
  };
  Split s;
  // Every reduction loop in the order the first input reads them, else the longest alone.
  AffineMap first = r.getMatchingIndexingMap(r.getDpsInputOperand(0));
  for (AffineExpr e : first.getResults())
    if (iterators[cast<AffineDimExpr>(e).getPosition()] == utils::IteratorType::reduction)
      s.group.push_back(cast<AffineDimExpr>(e).getPosition());
  if (s.group.size() != reductions.size() || !groupable(s.group)) {
    unsigned longest = *llvm::max_element(reductions, [&](unsigned a, unsigned b) { return ranges[a] < ranges[b]; });
    s.group = {longest};
  }
  s.extent = 1;
  for (unsigned d : s.group)
    s.extent *= ranges[d];
  // Adjacent threads read adjacent elements: along the split loops where the input has them
  // innermost (a row sum), else along the outputs (a pool over rows of channels, a matrix
  // times a vector over its rows).
  // The largest input decides (the weights of a matrix times a vector, not the vector).
  OpOperand *largest = *llvm::max_element(r.getDpsInputOperands(), [](OpOperand *a, OpOperand *b) {
    return cast<ShapedType>(a->get().getType()).getNumElements() < cast<ShapedType>(b->get().getType()).getNumElements();
  });
  AffineMap largestMap = r.getMatchingIndexingMap(largest);
  s.threadsInner = largestMap.getNumResults() > 0 &&
                   largestMap.getDimPosition(largestMap.getNumResults() - 1) == s.group.back();
  AffineMap outMap = r.getMatchingIndexingMap(r.getDpsInitOperand(0));
  unsigned rank = outMap.getNumResults();
  s.blockTile.assign(rank, 1);
  // Along the outputs, 8 of them per block where they stay enough blocks: a warp's loads then
  // use whole 32-byte sectors (8 floats) instead of one float of each.
  if (!s.threadsInner && rank > 0 && outputs / kSectorOutputs >= kMultiprocessors)
    s.blockTile[rank - 1] = largestDivisorAtMost(ranges[outMap.getDimPosition(rank - 1)], kSectorOutputs);
  int64_t perBlock = s.blockTile.empty() ? 1 : s.blockTile.back();
  int64_t wanted = std::clamp<int64_t>(static_cast<int64_t>(llvm::PowerOf2Ceil(kEnoughThreads / outputs)),
                                       kMinThreadsPerOutput, kThreadsPerBlock / perBlock);
  s.threads = largestDivisorAtMost(s.extent, std::min(wanted, s.extent / kMinStepsPerThread));
  if (s.threads < kMinThreadsPerOutput)
    return std::nullopt;
  int64_t budget = kThreadsPerBlock / (s.threads * perBlock);
  for (unsigned k = rank; k-- > 0 && budget > 1;) {
    int64_t extent = ranges[outMap.getDimPosition(k)] / s.blockTile[k];
    int64_t more = largestDivisorAtMost(extent, budget);
    s.blockTile[k] *= more;
    budget /= more;
  }
  return s;
}

// `v` with its dimensions [first, first + count) (of `extent` elements together) as
// [extent / threads][threads].
Value splitDims(OpBuilder &b, Location loc, Value v, unsigned first, unsigned count, int64_t extent,
                int64_t threads) {
  auto type = cast<RankedTensorType>(v.getType());
  if (count > 1) {
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    for (unsigned i = 0; i < type.getRank();) {
      ReassociationIndices group;
      unsigned n = i == first ? count : 1;
      for (unsigned k = 0; k < n; ++k)
        group.push_back(i + k);
      shape.push_back(i == first ? extent : type.getDimSize(i));
      groups.push_back(group);
      i += n;
    }
    v = tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
    type = cast<RankedTensorType>(v.getType());
  }
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i < type.getRank(); ++i) {
    if (i == first) {
      groups.push_back({static_cast<int64_t>(shape.size()), static_cast<int64_t>(shape.size() + 1)});
      shape.push_back(extent / threads);
      shape.push_back(threads);
    } else {
      groups.push_back({static_cast<int64_t>(shape.size())});
      shape.push_back(type.getDimSize(i));
    }
  }
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
}

// Rewrites `r` as a partial op (marked kPartialAttr) and a final op; returns the final op.
// The partial op's loops: r's, less the group's, then the group's steps, with the threads'
// loop last where they are adjacent, else first (thread tiling makes the last loop fastest).
linalg::GenericOp splitReduction(RewriterBase &rewriter, linalg::LinalgOp r, const Combiner &comb, const Split &s) {
  MLIRContext *ctx = r.getContext();
  Location loc = r.getLoc();
  rewriter.setInsertionPoint(r);
  unsigned loops = r.getNumLoops();
  unsigned kept = loops - s.group.size();
  unsigned first = s.threadsInner ? 0 : 1;
  SmallVector<AffineExpr> renumbered(loops);  // r's loops outside the group, in the new op
  unsigned next = first;
  SmallVector<utils::IteratorType> iterators;
  if (!s.threadsInner)
    iterators.push_back(utils::IteratorType::parallel);
  for (unsigned d = 0; d < loops; ++d)
    if (!llvm::is_contained(s.group, d)) {
      renumbered[d] = getAffineDimExpr(next++, ctx);
      iterators.push_back(r.getIteratorTypesArray()[d]);
    }
  AffineExpr steps = getAffineDimExpr(first + kept, ctx);
  AffineExpr thread = getAffineDimExpr(s.threadsInner ? kept + 1 : 0, ctx);
  iterators.push_back(utils::IteratorType::reduction);
  if (s.threadsInner)
    iterators.push_back(utils::IteratorType::parallel);
  unsigned newLoops = kept + 2;
  // Inputs: the group's dimensions as [steps][threads]; their maps index (steps, thread).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : r.getDpsInputOperands()) {
    AffineMap map = r.getMatchingIndexingMap(in);
    int64_t at = *groupPosition(map, s.group);
    SmallVector<AffineExpr> results;
    for (unsigned k = 0; k < map.getNumResults(); ++k) {
      if (at >= 0 && k == static_cast<unsigned>(at)) {
        results.push_back(steps);
        results.push_back(thread);
        k += s.group.size() - 1;
        continue;
      }
      results.push_back(renumbered[map.getDimPosition(k)]);
    }
    inputs.push_back(at >= 0 ? splitDims(rewriter, loc, in->get(), at, s.group.size(), s.extent, s.threads)
                             : in->get());
    maps.push_back(AffineMap::get(newLoops, 0, results, ctx));
  }
  // The partials: the outputs with the threads of each, fastest or slowest.
  AffineMap outMap = r.getMatchingIndexingMap(r.getDpsInitOperand(0));
  auto outType = cast<RankedTensorType>(r->getResult(0).getType());
  SmallVector<AffineExpr> partialResults;
  for (AffineExpr e : outMap.getResults())
    partialResults.push_back(renumbered[cast<AffineDimExpr>(e).getPosition()]);
  SmallVector<int64_t> partialShape(outType.getShape());
  unsigned at = s.threadsInner ? partialShape.size() : 0;
  partialResults.insert(partialResults.begin() + at, thread);
  partialShape.insert(partialShape.begin() + at, s.threads);
  maps.push_back(AffineMap::get(newLoops, 0, partialResults, ctx));
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, outType.getElementType());
  Value neutral = arith::ConstantOp::create(rewriter, loc, comb.neutral);
  Value filled = linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
  auto partial = linalg::GenericOp::create(rewriter, loc, TypeRange{filled.getType()}, inputs, ValueRange{filled},
                                           maps, iterators);
  rewriter.cloneRegionBefore(r->getRegion(0), partial.getRegion(), partial.getRegion().begin());
  partial->setAttr(kPartialAttr, rewriter.getUnitAttr());

  // The final op: each output's initial value combined with its partials.
  unsigned rank = outType.getRank();
  SmallVector<AffineExpr> identity, partialsRead;
  for (unsigned k = 0; k < rank; ++k)
    identity.push_back(getAffineDimExpr(k, ctx));
  partialsRead = identity;
  partialsRead.insert(partialsRead.begin() + at, getAffineDimExpr(rank, ctx));
  SmallVector<utils::IteratorType> finalIterators(rank, utils::IteratorType::parallel);
  finalIterators.push_back(utils::IteratorType::reduction);
  auto final = linalg::GenericOp::create(
      rewriter, loc, TypeRange{outType}, ValueRange{partial.getResult(0)}, ValueRange{r.getDpsInits()[0]},
      {AffineMap::get(rank + 1, 0, partialsRead, ctx), AffineMap::get(rank + 1, 0, identity, ctx)}, finalIterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        // comb(out, x) as in the reduction's body, x a partial.
        BlockArgument out = r.getMatchingBlockArgument(r.getDpsInitOperand(0));
        IRMapping map;
        for (Value operand : comb.op->getOperands())
          map.map(operand, operand == out ? args[1] : args[0]);
        linalg::YieldOp::create(b, l, b.clone(*comb.op, map)->getResult(0));
      });
  rewriter.replaceOp(r, final->getResults());
  return final;
}

LogicalResult splitKernel(func::FuncOp fn, ReductionKernel k, const Combiner &comb, const Split &s) {
  IRRewriter rewriter(fn.getContext());
  Location loc = k.reduction.getLoc();
  // An accumulator that starts as a binding (a Gemm's C) starts as a copy of it: the blocks
  // write a new tensor, not over the read-only binding.
  if (OpOperand *init = k.reduction.getDpsInitOperand(0); !init->get().getDefiningOp<linalg::LinalgOp>()) {
    rewriter.setInsertionPoint(k.reduction);
    auto type = cast<RankedTensorType>(init->get().getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    auto copy = linalg::CopyOp::create(rewriter, loc, init->get(), empty);
    rewriter.modifyOpInPlace(k.reduction, [&] { init->set(copy->getResult(0)); });
  }
  bool rootIsReduction = k.root == k.reduction;
  linalg::GenericOp final = splitReduction(rewriter, k.reduction, comb, s);
  linalg::LinalgOp root = rootIsReduction ? cast<linalg::LinalgOp>(final.getOperation()) : k.root;
  // Blocks of outputs (the final op's and the epilogue's loops are the output dimensions).
  SmallVector<int64_t> rootTile(s.blockTile);
  if (rootIsReduction)
    rootTile.push_back(0);
  FailureOr<scf::ForallOp> blocks = tileToBlocks(rewriter, root, rootTile);
  if (failed(blocks))
    return failure();
  linalg::LinalgOp partial, blockRoot;
  for (auto op : blocks->getBody()->getOps<linalg::LinalgOp>()) {
    if (op->hasAttr(kPartialAttr))
      partial = op;
    if (llvm::any_of(op->getUsers(), [](Operation *u) { return isa<tensor::ParallelInsertSliceOp>(u); }))
      blockRoot = op;
  }
  auto fill = partial ? partial.getDpsInits()[0].getDefiningOp<linalg::FillOp>() : linalg::FillOp();
  if (!partial || !blockRoot || !fill)
    return blocks->emitError("internal error: the block tile of a split reduction");
  partial->removeAttr(kPartialAttr);
  // The partials in shared memory: each thread fills its own and reduces its steps into it.
  rewriter.setInsertionPoint(fill);
  Value shared = sharedTensor(rewriter, loc, cast<RankedTensorType>(fill.getResult(0).getType()));
  rewriter.modifyOpInPlace(fill, [&] { fill.getDpsInitsMutable()[0].set(shared); });
  if (failed(tileToThreads(rewriter, cast<TilingInterface>(partial.getOperation()),
                           elementTile(cast<TilingInterface>(partial.getOperation())), /*fuse=*/true)))
    return failure();
  // One thread per output: the initial value, the partials combined, the epilogue.
  if (failed(tileToThreads(rewriter, cast<TilingInterface>(blockRoot.getOperation()),
                           elementTile(cast<TilingInterface>(blockRoot.getOperation())), /*fuse=*/true)))
    return failure();
  return finishBlocks(rewriter, fn, *blocks);
}

struct SplitReductionsPass : public mlir::hexir::impl::SplitReductionsBase<SplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> kernels;
    for (func::FuncOp fn : kernelFunctions(getOperation()))
      if (!fn->hasAttr(kCudaStagedAttrName))
        kernels.push_back(fn);
    for (func::FuncOp fn : kernels) {
      auto analyze = [](func::FuncOp f) -> std::optional<std::tuple<ReductionKernel, Combiner, Split>> {
        std::optional<ReductionKernel> k = matchReductionKernel(f);
        if (!k)
          return std::nullopt;
        std::optional<Combiner> comb = combinerOf(k->reduction);
        std::optional<Split> split = comb ? chooseSplit(k->reduction) : std::nullopt;
        if (!split)
          return std::nullopt;
        return std::make_tuple(*k, *comb, *split);
      };
      if (!analyze(fn))
        continue;
      // Split on a copy: a kernel whose split fails half-way (upstream tiling refusing a shape
      // the analysis let through) stays as it was, for TileToThreads.
      OpBuilder b(fn);
      b.setInsertionPointAfter(fn);
      auto copy = cast<func::FuncOp>(b.clone(*fn));
      auto plan = analyze(copy);
      bool split;
      {
        ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &) { return success(); });
        split = plan && succeeded(splitKernel(copy, std::get<0>(*plan), std::get<1>(*plan), std::get<2>(*plan)));
      }
      if (split)
        fn.erase();
      else
        copy.erase();
    }
  }
};

} // namespace

//===- TileAndVectorize.cpp - vector kernels on tensors -------------------===//
//
// Host kernel code generation before bufferization, for the kinds of compute op that carry
// nearly all of a network's work: contractions (MatMul, Gemm, batched matmul), channels-last
// convolutions (also with packed filters), depthwise convolutions and poolings, elementwise ops
// (activations, GELU, bias adds: rows of the innermost dimension as vector ops) and reductions
// over outer dimensions (a global pool). A kernel may also end with an elementwise epilogue
// (computed with its root block by block, in place: in each register tile, or each cache
// block where the reduction is split into blocks, see fusedBlocks; chunk by chunk for a
// convolution over more than 64 input channels) and a pad (written in
// place, see padInPlace). The kernel's root op is tiled
// three times:
//   1. workgroups: one loop over chunks of one output dimension, bounded by the kernel's
//      workgroup range (hexir.workgroup_range), so the host thread pool can split a dispatch;
//   2. cache (contractions): blocks of A and B that stay in L1/L2 while they are reused;
//   3. registers: a tile of accumulators that stays in vector registers while the reduction
//      runs in steps of one, vectorized into vector.contract (later FMA outer products).
// Ops that initialize the output (a zero fill, a broadcast bias, a copy of a bias argument) are
// split into the same workgroups and blocks and vectorized (a register tile's as one vector).
// A 1x1 convolution over an image narrower than the best register tile has its rows and
// columns collapsed into one row loop first (collapseRows). A contraction over panels of B
// packed in its kernel (dispatch formation fused the packing in) packs each cache block of
// panels into a stack buffer where it reads it (packPanelsInPlace).
//
// The strategy (which tiles, which workgroups) is chosen in TileStrategy.cpp; the tiling steps
// (workgroup loop, pad in place, pad-only kernels) are in KernelTiling.cpp, row kernels' in
// RowKernelTiling.cpp.
// Tile sizes divide the shapes exactly (the largest divisor up to the preferred size), so every
// tile is static and vectorizes without masks; where a row extent's divisors give only small
// register tiles (a prime number of tokens), the rows are peeled into whole best tiles and the
// rest, in each cache block or for the whole kernel (TileStrategy's splitRowTiles), never
// scalar code. The reduction order of every output element is fixed at
// compile time, independent of how workgroups are spread over threads, so results are
// bit-identical for any thread count.
//
// Kernels of any other shape are left alone: the memref-level passes (DistributeWorkgroups,
// linalg-to-loops) still compile them.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/KernelTiling.h"
#include "Target/Host/Passes.h"
#include "Target/Host/TileStrategy.h"
#include "Transforms/RowKernel.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_TILEANDVECTORIZE
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

using Kind = hexir::KernelKind;
using Strategy = hexir::KernelStrategy;
using Split = hexir::WorkgroupSplit;
using namespace hexir;

struct TileAndVectorizePass : public mlir::hexir::impl::TileAndVectorizeBase<TileAndVectorizePass> {
  using TileAndVectorizeBase::TileAndVectorizeBase;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isDeclaration() && failed(runOnKernel(fn)))
        return signalPassFailure();
  }

  // What a kernel computes: its root (the one compute op with a strategy), optionally an
  // elementwise epilogue reading the root's result (dispatch formation fuses an activation or a
  // residual add into the convolution or matmul before it), then optionally a pad (the kernel
  // writes into the padded tensor's interior, see padInPlace). Other ops may only
  // be constants, tensor.empty and the initializers the root accumulates onto.
  struct KernelShape {
    linalg::LinalgOp root;
    linalg::GenericOp epilogue;
    tensor::PadOp pad;
    tensor::InsertSliceOp insert;  // writes the result into a slice of its destination
    Strategy strategy;
    // The epilogue writes another element type than the root's (int32 accumulators
    // requantized to int8): the root accumulates each register tile apart (narrowingChain).
    bool narrows = false;
  };

  std::optional<KernelShape> findRoot(func::FuncOp fn, int64_t lanes) {
    SmallVector<linalg::LinalgOp> compute;
    for (Operation &op : fn.getBody().front()) {
      // (An extract_slice: the interior of a padded argument, read in place of the unpadded
      // tensor; see padsShareProducers.)
      if (isa<arith::ConstantOp, tensor::EmptyOp, linalg::FillOp, tensor::PadOp, tensor::InsertSliceOp,
              tensor::ExtractSliceOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp, func::ReturnOp>(op))
        continue;
      // (The packing of B into panels: packed block by block where the contraction reads it,
      // see packPanelsInPlace.)
      if (isPanelPack(&op) && llvm::all_of(op.getUsers(), [&](Operation *u) { return u->getBlock() == op.getBlock(); }))
        continue;
      if (isInitializer(op) && llvm::all_of(op.getUsers(), [](Operation *u) { return isa<linalg::LinalgOp>(u); }))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp || compute.size() == 2)
        return std::nullopt;
      compute.push_back(linalgOp);
    }
    if (compute.empty())
      return std::nullopt;
    KernelShape k;
    k.root = compute.front();
    std::optional<Strategy> s = chooseStrategy(k.root, lanes);
    if (!s || (compute.size() == 1 && !k.root->hasOneUse()))
      return std::nullopt;
    k.strategy = *s;
    if (compute.size() == 2) {
      // The epilogue reads the root's result element for element, and only it does.
      k.epilogue = dyn_cast<linalg::GenericOp>(compute.back().getOperation());
      std::optional<Strategy> e = k.epilogue ? chooseStrategy(k.epilogue, lanes) : std::nullopt;
      if (!e)
        return std::nullopt;
      auto rootType = cast<RankedTensorType>(k.root->getResult(0).getType());
      auto outType = cast<RankedTensorType>(k.epilogue->getResult(0).getType());
      if (e->kind != Kind::Elementwise || outType.getShape() != rootType.getShape() ||
          !isEmptyTensor(k.epilogue.getDpsInits()[0]))
        return std::nullopt;
      k.narrows = outType != rootType;
      // Only where the root's tiles can be its register tiles (see fusedBlocks; a window op
      // computing its border itself is refused with a reason below).
      if (k.narrows && (k.strategy.kind == Kind::Elementwise || k.strategy.kind == Kind::Reduction))
        return std::nullopt;
      // (A SiLU reads it twice.)
      for (OpOperand &use : k.root->getUses())
        if (use.getOwner() != k.epilogue || !k.epilogue.getMatchingIndexingMap(&use).isIdentity() ||
            k.epilogue.isDpsInit(&use))
          return std::nullopt;
    }
    Operation *last = compute.back();
    if (!last->hasOneUse())
      return std::nullopt;
    Operation *user = *last->getUsers().begin();
    k.pad = dyn_cast<tensor::PadOp>(user);
    if (k.pad && (!k.pad->hasOneUse() || !isa<func::ReturnOp>(*k.pad->getUsers().begin()) ||
                  !k.pad.getResultType().hasStaticShape() ||
                  !matchPattern(k.pad.getConstantPaddingValue(), m_Constant())))
      return std::nullopt;
    k.insert = dyn_cast<tensor::InsertSliceOp>(user);
    if (k.insert) {
      Value dest = k.insert.getDest();
      if (!k.insert->hasOneUse() || !isa<func::ReturnOp>(*k.insert->getUsers().begin()) ||
          k.insert.getSource() != last->getResult(0) || !isStaticSliceWrite(k.insert) ||
          !(isa<BlockArgument>(dest) || dest.getDefiningOp<tensor::EmptyOp>()))
        return std::nullopt;
    }
    if (!k.pad && !k.insert && !isa<func::ReturnOp>(user))
      return std::nullopt;
    return k;
  }

  // The kernel's ops as a row kernel (softmax, layer normalization), if they are one.
  std::optional<hexir::RowKernel> findRowKernel(func::FuncOp fn) {
    SmallVector<linalg::GenericOp> ops;
    for (Operation &op : fn.getBody().front()) {
      if (isa<arith::ConstantOp, tensor::EmptyOp, linalg::FillOp, tensor::ExtractSliceOp, func::ReturnOp>(op))
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic)
        return std::nullopt;
      ops.push_back(generic);
    }
    if (ops.size() < 2 || !ops.back()->hasOneUse() || !isa<func::ReturnOp>(*ops.back()->getUsers().begin()))
      return std::nullopt;
    return hexir::matchRowKernel(ops);
  }

  LogicalResult runRowKernel(func::FuncOp fn, hexir::RowKernel &k, int64_t lanes) {
    IRRewriter rewriter(fn.getContext());
    Location loc = k.ops.back().getLoc();
    rewriter.setInsertionPointToStart(&fn.getBody().front());
    auto range = mlir::hexir::WorkgroupRangeOp::create(rewriter, loc, rewriter.getIndexType(),
                                                       rewriter.getIndexType());
    SmallVector<hexir::RowTile> tiles;
    FailureOr<int64_t> workgroups =
        hexir::tileRowKernel(rewriter, k, range.getBegin(), range.getEnd(), lanes, minWork, maxWorkgroups, tiles);
    if (failed(workgroups))
      return failure();
    fn->setAttr(mlir::hexir::kWorkgroupsAttrName, rewriter.getI64IntegerAttr(*workgroups));
    SmallVector<Operation *> toVectorize;
    for (hexir::RowTile &t : tiles) {
      if (llvm::all_of(t.registers, [](int64_t size) { return size == 0; })) {
        toVectorize.push_back(t.op);
        continue;
      }
      FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, t.op, t.registers);
      if (failed(tiled))
        return t.op->emitError() << "could not tile a row kernel's op for the registers";
      toVectorize.push_back(tiled->tiledOps[0]);
    }
    return vectorizeAll(fn, toVectorize);
  }

  // Vectorizes `ops` (an op the vectorizer does not take stays a tiled linalg op and becomes
  // loops later) and simplifies the vector code, as
  // transform.structured.vectorize_children_and_apply_patterns: broadcasts out of the
  // transfers and into vector.contract, transfers of slices read from the whole tensor.
  LogicalResult vectorizeAll(func::FuncOp fn, ArrayRef<Operation *> ops) {
    IRRewriter rewriter(fn.getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::VectorizationResult> result = linalg::vectorize(rewriter, op);
      if (succeeded(result))
        rewriter.replaceOp(op, result->replacements);
    }
    RewritePatternSet patterns(fn.getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, fn.getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, fn.getContext());
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    if (failed(applyPatternsGreedily(fn, std::move(patterns))))
      return fn.emitError() << "simplifying the vector code failed";
    return success();
  }

  LogicalResult runOnKernel(func::FuncOp fn) {
    int64_t lanes = f32Lanes(vectorBits);
    if (std::optional<hexir::RowKernel> rows = findRowKernel(fn))
      return runRowKernel(fn, *rows, lanes);
    std::optional<KernelShape> shape = findRoot(fn, lanes);
    // A 1x1 convolution's rows and columns as one row loop where its columns are too few for
    // the best register tile (a 7x7 or 13x13 image).
    if (shape && !shape->pad && !shape->insert) {
      SmallVector<int64_t> rows = collapsibleRows(shape->root, shape->strategy, lanes);
      IRRewriter rewriter(fn.getContext());
      FailureOr<bool> collapsed = rows.empty() ? FailureOr<bool>(false) : collapseRows(rewriter, fn, shape->root, rows);
      if (failed(collapsed))
        return fn.emitError() << "could not collapse the rows of a 1x1 convolution";
      if (*collapsed) {
        shape = findRoot(fn, lanes);
        if (!shape)
          return fn.emitError() << "no kernel left after collapsing its rows";
      }
    }
    if (!shape) {
      // A kernel that only pads or only concatenates: rows of its result as workgroups.
      if (failed(splitPad(fn, minWork, maxWorkgroups)))
        return failure();
      return splitConcat(fn, minWork, maxWorkgroups);
    }
    linalg::LinalgOp root = shape->root;
    Strategy &strategy = shape->strategy;
    IRRewriter rewriter(fn.getContext());
    Location loc = root.getLoc();
    rewriter.setInsertionPointToStart(&fn.getBody().front());
    auto range = mlir::hexir::WorkgroupRangeOp::create(rewriter, loc, rewriter.getIndexType(),
                                                       rewriter.getIndexType());
    // Where the output goes: the interior of the padded result.
    SmallVector<linalg::FillOp> borderFills;
    Value interior = shape->pad      ? padInPlace(rewriter, shape->pad, range.getBegin(), borderFills)
                     : shape->insert ? sliceInPlace(rewriter, shape->insert, range.getBegin())
                                     : Value();

    // A read-only kernel argument as the accumulator's initial value (a bias) is copied into
    // the output first, explicitly, so that the copy is split into workgroups with the root.
    OpOperand *init = root.getDpsInitOperand(0);
    if (isa<BlockArgument>(init->get())) {
      rewriter.setInsertionPoint(root);
      auto type = cast<RankedTensorType>(init->get().getType());
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
      Value copy = linalg::CopyOp::create(rewriter, loc, init->get(), empty).getResult(0);
      rewriter.modifyOpInPlace(root, [&] { init->set(copy); });
    }
    // The ops writing the output, in order: its initializers, the root, the epilogue.
    SmallVector<linalg::LinalgOp> writers;
    // (A while loop: a variable declared in a for condition is gone when the increment runs.)
    Value v = init->get();
    while (auto producer = v.getDefiningOp<linalg::LinalgOp>()) {
      if (producer.getNumDpsInits() != 1 || !isInitializer(*producer))
        return shape->pad || shape->epilogue ? root.emitError() << "a fused kernel's accumulator must start from tensor.empty"
                                             : success();
      writers.insert(writers.begin(), producer);
      v = producer.getDpsInitOperand(0)->get();
    }
    unsigned rootIndex = writers.size();
    writers.push_back(root);
    bool narrows = shape->narrows;
    if (shape->epilogue)
      writers.push_back(narrows ? linalg::LinalgOp(shape->epilogue)
                                : hexir::inPlaceOn(rewriter, shape->epilogue, root->getResult(0)));
    if (interior) {
      // (The chain's destination: a narrowing epilogue's.)
      OpOperand *first = (narrows ? writers.back() : writers.front()).getDpsInitOperand(0);
      if (!first->get().getDefiningOp<tensor::EmptyOp>())
        return root.emitError() << "a padded or slice-writing kernel's accumulator must start from tensor.empty";
      rewriter.modifyOpInPlace(first->getOwner(), [&] { first->set(interior); });
    }

    SmallVector<Operation *> toVectorize;
    // A depthwise convolution or pooling reading a pad computes its border itself (no padded
    // tensor): its own workgroups and register tiles (WindowBorders.cpp).
    tensor::PadOp inputPad = borderPad(root);
    if (inputPad && narrows)
      return root.emitError() << "a window op over its padded input cannot take a narrowing epilogue";
    if (inputPad) {
      FailureOr<int64_t> workgroups =
          tileWindowWithBorders(rewriter, writers, rootIndex, inputPad, range, lanes, minWork, maxWorkgroups);
      if (failed(workgroups))
        return root.emitError() << "could not split the window op over the border of its padded input";
      fn->setAttr(mlir::hexir::kWorkgroupsAttrName, rewriter.getI64IntegerAttr(*workgroups));
    } else {
      // Workgroups, then cache and register tiles of `part` (the writers of the whole output,
      // or of one part of it: workgroups from `base` on); returns the number of workgroups.
      auto tileWriters = [&](SmallVector<linalg::LinalgOp> part, Strategy &strategy,
                             std::optional<int64_t> base) -> FailureOr<int64_t> {
        linalg::LinalgOp root = part[rootIndex];
        // Workgroups: chunks of one or two output dimensions, each chunk a whole number of
        // register tiles, at most maxWorkgroups in all and at least minWork iterations each.
        AffineMap outMap = root.getMatchingIndexingMap(root.getDpsInitOperand(0));
        int64_t work = 1;
        for (int64_t r : strategy.ranges)
          work *= r;
        int64_t wanted = std::clamp<int64_t>(work / std::max<int64_t>(minWork, 1), 1, maxWorkgroups);
        SmallVector<Split> splits = chooseSplits(root, strategy, outMap, wanted);
        int64_t workgroups = 1;
        for (const Split &split : splits)
          workgroups *= split.count;

        SmallVector<linalg::LinalgOp> tiledWriters = part;
        if ((!splits.empty() || base) && failed(workgroupLoop(rewriter, part, splits, range, tiledWriters, base)))
          return root.emitError() << "could not split the kernel into workgroups";

        // The initializers and the epilogue block by block with the root: in its register
        // tiles, or in its cache blocks when the reduction is split into blocks.
        bool inRegisters = false;
        if (tiledWriters.size() > 1)
          if (std::optional<FusedBlocks> fused = fusedBlocks(tiledWriters[rootIndex], strategy, lanes, narrows)) {
            SmallVector<linalg::LinalgOp> blocked;
            if (failed(blockLoops(rewriter, tiledWriters, fused->blocks, fused->order, blocked)))
              return root.emitError() << "could not fuse the kernel's initializers and epilogue into its tiles";
            tiledWriters = blocked;
            inRegisters = fused->registers;
          }
        // A narrowing chain's wide tiles are register tiles, never a tensor the size of the chunk.
        if (narrows && !inRegisters)
          return root.emitError() << "no register tiles for the root of a narrowing epilogue";

        // Cache and register tiles, then vector code.
        for (auto [index, writer] : llvm::enumerate(tiledWriters)) {
          SmallVector<int64_t> ranges = writer.getStaticLoopRanges();
          if (index != rootIndex && inRegisters) {
            // A register tile's bias or activation: one vector op on the accumulators.
            toVectorize.push_back(writer);
            continue;
          }
          if (index != rootIndex) {
            FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, writer, elementwiseRegisterTiles(ranges, lanes));
            if (failed(tiled))
              return writer.emitError() << "could not tile the kernel's initializer or epilogue";
            toVectorize.push_back(tiled->tiledOps[0]);
            continue;
          }
          Operation *current = writer;
          if (strategy.kind == Kind::Conv) {
            // Input channels in blocks (convChannelBlock), outside the output rows: the filter
            // block (kh x kw x block x the workgroup's output channels) stays in L1/L2 for all
            // rows.
            // Whole filters of deep layers do not (3x3x512x512: 9.4 MB, rows 2 KiB apart).
            unsigned c = strategy.channelLoop;
            strategy.cache[c] = largestDivisorAtMost(ranges[c], convChannelBlock(lanes));
            if (strategy.cache[c] < ranges[c]) {
              SmallVector<int64_t> sizes(ranges.size(), 0);
              sizes[c] = strategy.cache[c];
              FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, current, sizes);
              if (failed(tiled))
                return writer.emitError() << "could not tile the convolution for the caches";
              current = tiled->tiledOps[0];
              ranges = cast<linalg::LinalgOp>(current).getStaticLoopRanges();
            }
          }
          if (strategy.kind == Kind::Contraction) {
            chooseCacheTiles(strategy, ranges);
            if (llvm::any_of(strategy.cache, [](int64_t t) { return t != 0; })) {
              FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, current, strategy.cache, strategy.cacheOrder);
              if (failed(tiled))
                return writer.emitError() << "could not tile the kernel for the caches";
              current = tiled->tiledOps[0];
              ranges = cast<linalg::LinalgOp>(current).getStaticLoopRanges();
            }
          }
          // B packed in the kernel: each block of panels where this block of the
          // contraction reads it, its rows as vectors.
          FailureOr<linalg::GenericOp> pack = packPanelsInPlace(rewriter, cast<linalg::LinalgOp>(current));
          if (failed(pack))
            return writer.emitError() << "could not pack the panels of B where the kernel reads them";
          if (*pack) {
            SmallVector<int64_t> packRanges = cast<linalg::LinalgOp>(pack->getOperation()).getStaticLoopRanges();
            FailureOr<scf::SCFTilingResult> tiled =
                tileOp(rewriter, *pack, elementwiseRegisterTiles(packRanges, lanes));
            if (failed(tiled))
              return writer.emitError() << "could not tile the packing of B's panels";
            toVectorize.push_back(tiled->tiledOps[0]);
          }
          FailureOr<SmallVector<Operation *>> tiles =
              tileForRegisters(rewriter, cast<linalg::LinalgOp>(current), strategy.registers, strategy.registerOrder,
                               lanes);
          if (failed(tiles))
            return writer.emitError() << "could not tile the kernel for the registers";
          for (Operation *tile : *tiles) {
            if (strategy.dotGroups)
              // (A tile of several taps, which the strategy never makes, would stay scalar loops.)
              (void)windowTileAsContraction(rewriter, cast<linalg::GenericOp>(tile), strategy.strides);
            else if (strategy.packedFilter)
              toNamedConv(rewriter, cast<linalg::GenericOp>(tile), strategy.strides, strategy.dilations);
            else
              toVectorize.push_back(tile);
          }
        }
        return workgroups;
      };

      // Rows whose extent only small tiles divide (127 tokens, 111 output columns): the rows
      // of whole best tiles, then the rest, each part with its own workgroups and tiles.
      int64_t workgroups = 0;
      SmallVector<SmallVector<linalg::LinalgOp>> parts;
      if (std::optional<RowRemainder> rows = rowRemainder(root, strategy, lanes)) {
        if (failed(splitWriters(rewriter, writers, rows->outDim, rows->split, parts)))
          return root.emitError() << "could not split the kernel's rows into whole register tiles and the rest";
        for (SmallVector<linalg::LinalgOp> &part : parts) {
          std::optional<Strategy> partStrategy = chooseStrategy(part[rootIndex], lanes);
          if (!partStrategy)
            return root.emitError() << "no register tiles for a part of the kernel's rows";
          FailureOr<int64_t> count = tileWriters(part, *partStrategy, workgroups);
          if (failed(count))
            return failure();
          workgroups += *count;
        }
      } else {
        FailureOr<int64_t> count = tileWriters(writers, strategy, std::nullopt);
        if (failed(count))
          return failure();
        workgroups = *count;
      }
      fn->setAttr(mlir::hexir::kWorkgroupsAttrName, rewriter.getI64IntegerAttr(workgroups));
    }

    // The border of a padded result: rows of vectors like an initializer (whole rows as one
    // vector would be huge; left as loops, their stores through views of the output would keep
    // the accumulators from being hoisted into registers).
    SmallVector<Operation *> borderTiles;
    for (linalg::FillOp fill : borderFills) {
      SmallVector<int64_t> ranges = cast<linalg::LinalgOp>(fill.getOperation()).getStaticLoopRanges();
      FailureOr<scf::SCFTilingResult> tiled = tileOp(rewriter, fill, elementwiseRegisterTiles(ranges, lanes));
      if (failed(tiled))
        return fill.emitError() << "could not tile the border of a padded result";
      borderTiles.push_back(tiled->tiledOps[0]);
    }

    // Convolutions and windows: one output row per tile, so the 2-D op decomposes into a 1-D
    // one, which the vectorizer turns into outer products over the tile's columns.
    if (strategy.kind != Kind::Contraction) {
      RewritePatternSet patterns(fn.getContext());
      linalg::populateDecomposeConvolutionPatterns(patterns);
      if (failed(applyPatternsGreedily(fn, std::move(patterns))))
        return fn.emitError() << "decomposing the convolution failed";
      toVectorize.clear();
      // (The border tiles are added below.)
      fn.walk([&](linalg::LinalgOp op) {
        if (!op->getParentOfType<scf::IfOp>())
          toVectorize.push_back(op);
      });
    }
    llvm::append_range(toVectorize, borderTiles);
    return vectorizeAll(fn, toVectorize);
  }
};

} // namespace

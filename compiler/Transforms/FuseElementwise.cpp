//===- FuseElementwise.cpp - chains of elementwise ops as one op ----------===//
//
// Dispatch formation makes one kernel per compute op, so every elementwise op of a chain (the
// Erf polynomial of a GELU, a SiLU's sigmoid and product, a softmax's subtract and exp) would
// write and read a whole tensor. Here an elementwise generic op is fused into the generic op
// that reads it when it has no other reader: one loop nest, no intermediate tensor.
// Contractions are never fused into (their body must stay a multiply-add for the vector
// kernels), and fusion never duplicates work across kernels (a producer with several readers
// stays; one read twice by the same op is fused into both reads), nor past 256 ops in one
// body (kMaxFusedBodyOps: compile time). An elementwise op between
// views that add unit dimensions computes without them.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "Dialect/Functions.h"
#include "Transforms/KernelClassification.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using mlir::hexir::allParallel;

namespace {

// The most ops a fused body may hold. Each fusion copies both bodies, so a chain of n ops
// fused into one costs n^2 / 2 copies (and fused locations as long): a chain of 4,000 ReLUs
// took 8 s to compile, 20,000 did not finish in a minute. Real models' chains are far shorter
// (an Erf polynomial with its GELU is about 30 ops); a longer chain becomes one kernel per
// 256 ops, each reading and writing its tensor once.
constexpr int64_t kMaxFusedBodyOps = 256;

int64_t bodyOps(linalg::GenericOp op) { return static_cast<int64_t>(op.getBody()->getOperations().size()); }

// Marks an op that stays out of its reader (see keepNarrowJoins).
constexpr llvm::StringLiteral kKeepAttr = "hexir.keep_narrow";

// Bits per element; 0 for types of no width (index, complex), which never narrow.
unsigned elementBits(Value v) {
  Type element = getElementTypeOrSelf(v.getType());
  return element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
}

// The compute op `v` is computed from through a chain of elementwise generics, each read only
// by the next and computing on one full-size tensor that is not a constant (and on constants
// and broadcast ones), the last one reading it
// element for element; the chain's narrowest value (the fewest bits per element; of equals,
// the one nearest the root); and whether the root's kernel could take the chain's ops as a
// narrowing epilogue (narrowsInRegisters).
struct RootChain {
  Operation *root;
  Value narrowest;
  bool narrows;
};
std::optional<RootChain> rootOf(Value in, OpOperand *read);
// (`read` reading a root's result itself is a chain of no ops.)
std::optional<RootChain> chainToRoot(OpOperand *read) {
  if (std::optional<RootChain> direct = rootOf(read->get(), read))
    return direct;
  Value v = read->get();
  Value narrowest = v;
  while (true) {
    auto generic = v.getDefiningOp<linalg::GenericOp>();
    if (!generic || !allParallel(generic) || generic->getNumResults() != 1 || !v.hasOneUse())
      return std::nullopt;
    // (Other run-time inputs read broadcast, as a matrix product's row sums, are no chain.)
    OpOperand *next = nullptr;
    for (OpOperand *in : generic.getDpsInputOperands()) {
      if (in->get().getDefiningOp<arith::ConstantOp>() ||
          generic.getMatchingIndexingMap(in).getNumResults() < generic.getNumLoops())
        continue;
      if (next)
        return std::nullopt;
      next = in;
    }
    if (!next || !isa<RankedTensorType>(next->get().getType()))
      return std::nullopt;
    Value in = next->get();
    auto producer = in.getDefiningOp<linalg::LinalgOp>();
    if (!producer)
      return std::nullopt;
    if (std::optional<RootChain> root = rootOf(in, next)) {
      root->narrowest = narrowest;
      return root;
    }
    if (elementBits(in) && elementBits(in) <= elementBits(narrowest))
      narrowest = in;
    v = in;
  }
}

// `in` as the result of a compute op that is not elementwise, read by `read`: a chain's root.
std::optional<RootChain> rootOf(Value in, OpOperand *read) {
  auto producer = in.getDefiningOp<linalg::LinalgOp>();
  auto elementwise = producer ? dyn_cast<linalg::GenericOp>(producer.getOperation()) : linalg::GenericOp();
  if (!producer || (elementwise && allParallel(elementwise)))
    return std::nullopt;
  auto reader = cast<linalg::LinalgOp>(read->getOwner());
  bool narrows = producer->getNumResults() == 1 && in.hasOneUse() && reader.getMatchingIndexingMap(read).isIdentity() &&
                 mlir::hexir::narrowsInRegisters(producer);
  return RootChain{producer, in, narrows};
}

// An elementwise op reading the results of several contractions or convolutions through
// chains of elementwise ops (a QDQ residual add: each convolution's int32 accumulators
// dequantized, requantized to int8, dequantized again) would, fused whole, read every int32
// result: only one of them can be its kernel's root, the others would be int32 tensors in
// memory. The first chain fuses; in each other chain, the op computing the narrowest tensor
// (the int8 output of the QuantizeLinear) stays out of its reader, so it becomes its own
// contraction's narrowing epilogue and the join reads int8.
void keepNarrowJoins(func::FuncOp fn) {
  fn.walk([&](linalg::GenericOp join) {
    if (!allParallel(join) || join->getNumResults() != 1)
      return;
    SmallVector<RootChain> chains;
    llvm::SmallPtrSet<Operation *, 4> roots;
    for (OpOperand *in : join.getDpsInputOperands())
      if (std::optional<RootChain> chain = chainToRoot(in); chain && chain->narrows && roots.insert(chain->root).second)
        chains.push_back(*chain);
    // (The first chain stays whole: the join is its root's epilogue.)
    if (chains.size() < 2)
      return;
    for (const RootChain &chain : llvm::drop_begin(chains)) {
      Value narrowest = chain.narrowest;
      if (elementBits(narrowest) && elementBits(narrowest) < elementBits(chain.root->getResult(0)) &&
          !llvm::is_contained(join.getDpsInputs(), narrowest))
        narrowest.getDefiningOp()->setAttr(kKeepAttr, UnitAttr::get(fn.getContext()));
    }
  });
}

// A chain from a contraction read through a permutation by its last op (a dequantization
// read transposed, the attention's heads put back together) would fuse whole into that reader,
// which then reads the int32 accumulators transposed: no longer an epilogue, so they go
// through memory. The chain's narrowest op (the QuantizeLinear) stays out of the reader
// instead, becomes the contraction's narrowing epilogue, and the reader reads int8.
void keepNarrowBeforePermutedReads(func::FuncOp fn) {
  fn.walk([&](linalg::GenericOp reader) {
    if (!allParallel(reader))
      return;
    for (OpOperand *in : reader.getDpsInputOperands()) {
      AffineMap map = reader.getMatchingIndexingMap(in);
      if (map.isIdentity() || !map.isPermutation())
        continue;
      // The chain up to the value the reader reads through the permutation.
      auto last = in->get().getDefiningOp<linalg::GenericOp>();
      if (!last || !allParallel(last) || last->getNumResults() != 1 || !in->get().hasOneUse() ||
          last.getNumDpsInputs() != 1)
        continue;
      std::optional<RootChain> chain = chainToRoot(last.getDpsInputOperand(0));
      if (!chain || !chain->narrows)
        continue;
      Value narrowest = chain->narrowest;
      if (elementBits(in->get()) && elementBits(in->get()) <= elementBits(narrowest))
        narrowest = in->get();
      if (elementBits(narrowest) && elementBits(narrowest) < elementBits(chain->root->getResult(0)))
        if (auto op = narrowest.getDefiningOp<linalg::GenericOp>())
          op->setAttr(kKeepAttr, UnitAttr::get(fn.getContext()));
    }
  });
}

// Upstream's fusion, keeping both ops' locations on the fused op (so that a dispatch still names
// every source op it computes, see --print-dispatches).
struct FuseIntoReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer, PatternRewriter &rewriter) const override {
    if (linalg::isaContractionOpInterface(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      // Read only by this op (a GELU reads its input twice: each read is fused in turn).
      if (!producer || producer->hasAttr(kKeepAttr) || !linalg::areElementwiseOpsFusable(&operand) ||
          llvm::any_of(producer->getUsers(), [&](Operation *user) { return user != consumer.getOperation(); }) ||
          bodyOps(producer) + bodyOps(consumer) > kMaxFusedBodyOps)
        continue;
      Location loc = rewriter.getFusedLoc({producer.getLoc(), consumer.getLoc()});
      FailureOr<linalg::ElementwiseOpFusionResult> fused = linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      fused->fusedOp->setLoc(loc);
      // (A kept op stays kept with its producers fused in.)
      if (consumer->hasAttr(kKeepAttr))
        fused->fusedOp->setAttr(kKeepAttr, rewriter.getUnitAttr());
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

// An elementwise op of `type` computing `op`'s body on `inputs`, all read element for element
// (the op moved to another shape: below a view, without unit dimensions).
linalg::GenericOp identityCopy(RewriterBase &rewriter, Location loc, linalg::GenericOp op, ValueRange inputs,
                               RankedTensorType type) {
  unsigned rank = type.getRank();
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  auto copy = linalg::GenericOp::create(rewriter, loc, TypeRange{type}, inputs, ValueRange{empty},
                                        SmallVector<AffineMap>(inputs.size() + 1, rewriter.getMultiDimIdentityMap(rank)),
                                        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
  rewriter.cloneRegionBefore(op.getRegion(), copy.getRegion(), copy.getRegion().end());
  return copy;
}

// An elementwise op computing a wider value from narrower run-time inputs only (a
// DequantizeLinear of int8 to f32), from tensor.empty, element by element, of static shape.
bool onlyWidens(linalg::GenericOp op) {
  if (!allParallel(op) || op->getNumResults() != 1 || op.getNumDpsInputs() == 0 || !op.hasPureTensorSemantics() ||
      !op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || !op.getBody()->getArguments().back().use_empty() ||
      !cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return false;
  unsigned out = elementBits(op->getResult(0));
  if (!out || !llvm::all_of(op.getDpsInputs(), [&](Value in) {
        return isa<RankedTensorType>(in.getType()) && !in.getDefiningOp<arith::ConstantOp>() && elementBits(in) &&
               elementBits(in) < out;
      }))
    return false;
  bool hasIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { hasIndex = true; });
  return !hasIndex;
}

// A widening op read by several generic ops it can fuse into (a softmax's max and its exp of
// the dequantized scores) gets a copy for each: each reader then computes it from the narrow
// tensor, which is the only one written (by its producer's kernel, a narrowing epilogue), where
// one shared copy would write and read the wide tensor.
struct WideningIntoReaders : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!onlyWidens(op) || op->hasOneUse() || bodyOps(op) > kMaxFusedBodyOps / 4)
      return failure();
    SmallVector<OpOperand *> reads;
    for (OpOperand &use : op->getUses()) {
      auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (reader && !linalg::isaContractionOpInterface(reader) && reader.isDpsInput(&use) &&
          linalg::areElementwiseOpsFusable(&use))
        reads.push_back(&use);
    }
    // (Every read but one when nothing else reads it: the last keeps the op.)
    if (reads.size() == static_cast<size_t>(std::distance(op->getUses().begin(), op->getUses().end())))
      reads.pop_back();
    if (reads.empty())
      return failure();
    for (OpOperand *read : reads) {
      rewriter.setInsertionPoint(op);
      Operation *copy = rewriter.clone(*op);
      rewriter.modifyOpInPlace(read->getOwner(), [&] { read->set(copy->getResult(0)); });
    }
    return success();
  }
};

// An elementwise op that only widens (every input narrower than its result: a DequantizeLinear
// of int8 to f32) and is read through views (a Slice of the attention's packed Q, K, V and the
// reshapes to heads) computes after each view instead, on the view of its narrow inputs: the
// views then cut the narrow tensor, the wide one is never written whole, and each copy of the
// op fuses into what reads its view (a requantization). A copy per view recomputes only what
// the view reads; readers that are not views keep the op.
struct WideningBelowViews : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!onlyWidens(op) ||
        !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    Operation *view = nullptr;
    for (Operation *user : op->getUsers())
      if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user) &&
          cast<RankedTensorType>(user->getResult(0).getType()).hasStaticShape()) {
        view = user;
        break;
      }
    if (!view)
      return failure();
    rewriter.setInsertionPoint(view);
    Location loc = view->getLoc();
    // The same view of each input, in the input's element type.
    auto viewOf = [&](Value in) -> Value {
      Type element = getElementTypeOrSelf(in.getType());
      auto type = cast<RankedTensorType>(view->getResult(0).getType()).clone(element);
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(view))
        return tensor::ExtractSliceOp::create(rewriter, loc, type, in, slice.getMixedOffsets(), slice.getMixedSizes(),
                                              slice.getMixedStrides());
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(view))
        return tensor::CollapseShapeOp::create(rewriter, loc, type, in, collapse.getReassociationIndices());
      auto expand = cast<tensor::ExpandShapeOp>(view);
      return tensor::ExpandShapeOp::create(rewriter, loc, type, in, expand.getReassociationIndices(),
                                           expand.getMixedOutputShape());
    };
    SmallVector<Value> inputs;
    for (Value in : op.getDpsInputs())
      inputs.push_back(viewOf(in));
    linalg::GenericOp copy = identityCopy(rewriter, rewriter.getFusedLoc({op.getLoc(), loc}), op, inputs,
                                          cast<RankedTensorType>(view->getResult(0).getType()));
    rewriter.replaceOp(view, copy->getResults());
    if (op->use_empty())
      rewriter.eraseOp(op);
    return success();
  }
};

// An elementwise op whose inputs are all expanded by one reshape that its results undo (a
// ReduceMean with keepdims, then its epsilon and square root on [rows, 1], read back as [rows])
// computes on the collapsed shape (elementwise ops commute with row-major reshapes), so that it
// joins its neighbours (the row kernel of a layer normalization).
struct ComputeWithoutUnitViews : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 || op.getNumDpsInputs() == 0 ||
        op.getNumParallelLoops() != op.getNumLoops() || !op.hasPureTensorSemantics() ||
        !op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || op->getResult(0).use_empty() ||
        !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }) ||
        !llvm::all_of(op.getBody()->without_terminator(),
                      [](Operation &inner) { return isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()); }))
      return failure();
    std::optional<SmallVector<ReassociationIndices>> groups;
    RankedTensorType collapsed;
    for (Operation *user : op->getUsers()) {
      auto view = dyn_cast<tensor::CollapseShapeOp>(user);
      if (!view || (groups && view.getReassociationIndices() != *groups))
        return failure();
      groups = view.getReassociationIndices();
      collapsed = view.getResultType();
    }
    SmallVector<Value> inputs;
    for (Value in : op.getDpsInputs()) {
      auto view = in.getDefiningOp<tensor::ExpandShapeOp>();
      if (!view || view.getReassociationIndices() != *groups ||
          view.getSrcType().getShape() != collapsed.getShape())
        return failure();
      inputs.push_back(view.getSrc());
    }
    linalg::GenericOp reduced = identityCopy(rewriter, op.getLoc(), op, inputs, collapsed);
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      rewriter.replaceOp(user, reduced->getResults());
    rewriter.eraseOp(op);
    return success();
  }
};

struct FuseElementwisePass : public mlir::hexir::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      // Widening ops move below views first, while they are still ops of their own (fused
      // with their producers they no longer widen).
      RewritePatternSet views(&getContext());
      views.add<WideningBelowViews, WideningIntoReaders>(&getContext());
      // A reshape between a widening op that reads through a permutation (a transposed
      // dequantization: WideningBelowViews cannot move it) and its reader: the reader computes
      // in the unreshaped shape instead (upstream fusion by expansion), so the two fuse.
      // (Only an elementwise reader, or an expand_shape of the widening op, is rewritten: a
      // contraction or reduction expanded so would split its reduction loop.)
      linalg::populateFoldReshapeOpsByExpansionPatterns(views, [](OpOperand *operand) {
        Operation *owner = operand->getOwner();
        auto reader = dyn_cast<linalg::GenericOp>(owner);
        if (!isa<tensor::ExpandShapeOp>(owner) && !(reader && allParallel(reader)))
          return false;
        Value source = operand->get();
        if (auto collapse = source.getDefiningOp<tensor::CollapseShapeOp>())
          source = collapse.getSrc();
        auto producer = source.getDefiningOp<linalg::GenericOp>();
        return producer && onlyWidens(producer) &&
               !llvm::all_of(producer.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); });
      });
      tensor::populateFoldTensorEmptyPatterns(views);
      if (failed(applyPatternsGreedily(fn, std::move(views)))) {
        fn.emitError() << "moving widening ops below views did not converge (an internal error: please report it)";
        return signalPassFailure();
      }
      if (narrowingEpilogues) {
        keepNarrowJoins(fn);
        keepNarrowBeforePermutedReads(fn);
      }
      RewritePatternSet patterns(&getContext());
      patterns.add<FuseIntoReader, ComputeWithoutUnitViews>(&getContext());
      if (failed(applyPatternsGreedily(fn, std::move(patterns)))) {
        fn.emitError() << "fusing elementwise ops did not converge (an internal error: please report it)";
        return signalPassFailure();
      }
      fn.walk([](linalg::GenericOp op) { op->removeAttr(kKeepAttr); });
    }
  }
};

} // namespace

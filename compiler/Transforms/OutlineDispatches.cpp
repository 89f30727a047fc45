//===- OutlineDispatches.cpp - dispatch formation -------------------------===//
//
// Turns each tensor computation of a graph function into a kernel function and a
// hexir.call_tir: one compute op per dispatch, with the initializers it accumulates onto, the
// matmul or convolution an elementwise epilogue reads, for a pad or a slice write
// (tensor.insert_slice: a concatenation's operand, see concatsInPlace), the op that produces
// what it pads or writes, for a depthwise convolution or pooling, the pad it reads (it computes
// its border itself), for a contraction over panels of a run-time B, the packing of B (see
// isPanelPack) and, for the last op of a softmax or layer normalization, the row
// reductions and elementwise ops before it (one row kernel).
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "Dialect/Functions.h"
#include "Transforms/KernelClassification.h"
#include "Transforms/RowKernel.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_OUTLINEDISPATCHES
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Whether the target fuses other ops into a kernel rooted at an op (GraphTargetRules).
using FusesIntoKernel = std::function<bool(linalg::LinalgOp)>;

bool isScalarConstant(Operation *op) {
  auto c = dyn_cast_or_null<arith::ConstantOp>(op);
  return c && c.getType().isIntOrIndexOrFloat();
}

// linalg.fill of a scalar constant into tensor.empty: an initializer, cheaper to recompute in
// each consumer's kernel than to store.
bool isInitFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  return fill && isScalarConstant(fill.getInputs()[0].getDefiningOp()) &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

// A broadcast into tensor.empty (all loops parallel, the body yields its one input): a bias
// spread over an accumulator. Recomputing it where it is read costs less than writing and
// reading the whole tensor.
bool isInitBroadcast(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return body.getOperations().size() == 1 && yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body.getArgument(0);
}

// An initializer cheap enough to recompute in each kernel that reads it (a constant fill, a
// broadcast into tensor.empty), instead of a dispatch of its own. (KernelClassification's
// isInitializer is another question: any op that writes a kernel's accumulator first.)
bool isRecomputedInit(Operation *op) { return isInitFill(op) || isInitBroadcast(op); }

// The interior of a padded tensor, read instead of the unpadded tensor (padsShareProducers):
// each kernel that reads it takes the padded tensor and slices it; never a kernel of its own.
constexpr llvm::StringLiteral kInteriorViewAttr = "hexir.interior_view";

bool isInteriorView(Operation *op) {
  return op && isa<tensor::ExtractSliceOp>(op) && op->hasAttr(kInteriorViewAttr);
}

// Ops cloned into the kernels that use them rather than passed as operands.
bool isCloneable(Operation *op) {
  return op && (isa<tensor::EmptyOp>(op) || isScalarConstant(op) || isRecomputedInit(op) || isInteriorView(op));
}

// Ops that compute a tensor and so run as a kernel.
bool isComputeOp(Operation *op) {
  return isa<linalg::LinalgDialect>(op->getDialect()) ||
         isa<tensor::PadOp, tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp>(op);
}

// A compute op becomes a dispatch unless it is an initializer read only by compute ops (a fill),
// or only as their accumulator (a broadcast: read as an input, a broadcast or a transposing
// copy would be materialized inside the kernel): then each user's kernel recomputes it.
bool isAnchor(Operation *op) {
  if (!isComputeOp(op) || isInteriorView(op))
    return false;
  if (!isRecomputedInit(op))
    return true;
  return !llvm::all_of(op->getUses(), [&](OpOperand &use) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    return isComputeOp(use.getOwner()) && (isInitFill(op) || (dps && dps.isDpsInit(&use)));
  });
}

// Whether `op`'s accumulator starts from tensor.empty, directly or through an initializer.
bool startsEmpty(linalg::LinalgOp op) {
  Value init = op.getDpsInits()[0];
  if (Operation *def = init.getDefiningOp(); def && isRecomputedInit(def))
    init = cast<DestinationStyleOpInterface>(def).getDpsInits()[0];
  return static_cast<bool>(init.getDefiningOp<tensor::EmptyOp>());
}

// The root computed inside an elementwise op's kernel, if any, the elementwise op being its
// epilogue (a bias add, an activation, a residual add after a matmul or convolution): a
// compute op the kernel generator vectorizes, not elementwise itself, read only by `anchor`,
// element for element. The kernel updates the root's result in place (TileAndVectorize), so no
// intermediate tensor exists. With `narrowing`, the epilogue of a contraction or convolution
// may write another element type (a requantization to int8) where narrowsInRegisters: the
// kernel narrows each register tile of the root's (TileAndVectorize), so no tensor of the
// root's type exists either.
Operation *epilogueRoot(Operation *anchor, const FusesIntoKernel &fuses, bool narrowing) {
  auto epilogue = dyn_cast<linalg::GenericOp>(anchor);
  if (!epilogue || epilogue->getNumResults() != 1 || epilogue.getNumDpsInits() != 1 ||
      !epilogue.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || !allParallel(epilogue) ||
      !fuses(epilogue))
    return nullptr;
  for (OpOperand *in : epilogue.getDpsInputOperands()) {
    auto root = in->get().getDefiningOp<linalg::LinalgOp>();
    if (!root || root->getNumResults() != 1 || root.getNumDpsInits() != 1 || allParallel(root) ||
        !root.hasPureTensorSemantics() || !startsEmpty(root) || !fuses(root))
      continue;
    auto rootType = cast<RankedTensorType>(in->get().getType());
    auto outType = cast<RankedTensorType>(epilogue->getResult(0).getType());
    if (rootType != outType) {
      if (!narrowing || rootType.getShape() != outType.getShape() || !narrowsInRegisters(root))
        continue;
    }
    if (llvm::all_of(root->getUses(), [&](OpOperand &use) {
          return use.getOwner() == anchor && epilogue.isDpsInput(&use) &&
                 epilogue.getMatchingIndexingMap(&use).isIdentity();
        }))
      return root;
  }
  return nullptr;
}

// The op computing `v` that a reader's kernel can compute into a part of its result: a compute
// op the kernel generator vectorizes, with one result, whose accumulator starts from
// tensor.empty; null otherwise.
linalg::LinalgOp partProducer(Value v, const FusesIntoKernel &fuses) {
  auto producer = v.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1 || producer.getNumDpsInits() != 1 ||
      !producer.hasPureTensorSemantics() || !fuses(producer) || !startsEmpty(producer))
    return nullptr;
  return producer;
}

// The same, computing `v` for one reader alone.
Operation *soleProducer(Value v, const FusesIntoKernel &fuses) {
  linalg::LinalgOp producer = partProducer(v, fuses);
  return producer && producer->hasOneUse() ? producer.getOperation() : nullptr;
}

// A pad a kernel can compute into: static shapes, a constant pad value.
bool isStaticConstantPad(tensor::PadOp pad) {
  return pad.getResultType().hasStaticShape() && pad.getConstantPaddingValue() &&
         isScalarConstant(pad.getConstantPaddingValue().getDefiningOp());
}

// The producer computed inside the kernel of the pad that reads it, if any: a compute op the
// kernel generator vectorizes, read only by the pad (a constant pad value, static shapes),
// whose accumulator starts from tensor.empty. The kernel then writes the result straight into
// the interior of the padded tensor: no unpadded tensor, no copy (hexir-tile-and-vectorize).
Operation *padProducer(Operation *anchor, const FusesIntoKernel &fuses) {
  auto pad = dyn_cast<tensor::PadOp>(anchor);
  if (!pad || !isStaticConstantPad(pad))
    return nullptr;
  return soleProducer(pad.getSource(), fuses);
}

// The producer computed inside the kernel of a tensor.insert_slice that writes it into a larger
// tensor (a concatenation's slice, see concatsInPlace), if any: the same conditions as a pad's
// producer, a static slice of unit strides and no rank change. The kernel writes the result
// straight into the slice of the destination (hexir-tile-and-vectorize).
Operation *insertProducer(Operation *anchor, const FusesIntoKernel &fuses) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(anchor);
  if (!insert || !isStaticSliceWrite(insert) || insert.getSource() == insert.getDest())
    return nullptr;
  return soleProducer(insert.getSource(), fuses);
}

// A concatenation whose every operand is computed by its own producer for it alone (a
// squeezenet fire module's two expand convolutions) becomes a chain of slice writes: the first
// producer's kernel writes its slice of a new tensor, each next one takes that tensor and writes
// its slice in place (the update InPlaceAnalysis plans over the same buffer). No operand tensor
// exists and nothing is copied (squeezenet's concatenations moved 11% of its run's bytes).
// Operands that are channel panels viewed as channels (collapse_shape of [..., c/w, w], the
// packed result of a convolution) are concatenated as panels, so each producer writes whole
// panels, as it computes them.
void concatsInPlace(func::FuncOp graph, const FusesIntoKernel &fuses) {
  SmallVector<tensor::ConcatOp> concats;
  graph.walk([&](tensor::ConcatOp op) {
    if (op->getParentOp() == graph)
      concats.push_back(op);
  });
  for (tensor::ConcatOp concat : concats) {
    RankedTensorType type = concat.getResultType();
    // A graph output lives in the caller's buffer, not the arena: the last writer would copy
    // its destination there around its slice, on one thread, where a concatenation kernel
    // copies in workgroups.
    if (!type.hasStaticShape() || concat.getInputs().size() < 2 ||
        llvm::any_of(concat->getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); }))
      continue;
    int64_t dim = static_cast<int64_t>(concat.getDim()), rank = type.getRank();
    // As panels: every operand a collapse of its last two dimensions, of one panel width,
    // along the collapsed (last) dimension.
    SmallVector<Value> sources;
    int64_t width = 0;
    bool panels = dim == rank - 1;
    for (Value in : concat.getInputs()) {
      auto collapse = in.getDefiningOp<tensor::CollapseShapeOp>();
      auto srcType = collapse ? collapse.getSrcType() : RankedTensorType();
      if (!collapse || !collapse->hasOneUse() || srcType.getRank() != rank + 1 || !srcType.hasStaticShape() ||
          collapse.getReassociationIndices().back().size() != 2 || (width && srcType.getShape().back() != width)) {
        panels = false;
        break;
      }
      width = srcType.getShape().back();
      sources.push_back(collapse.getSrc());
    }
    if (!panels)
      sources.assign(concat.getInputs().begin(), concat.getInputs().end());
    // Every source computed for this concatenation alone by a producer its kernel can take.
    if (llvm::any_of(sources, [&](Value v) { return !soleProducer(v, fuses); }))
      continue;
    OpBuilder b(concat);
    Location loc = concat.getLoc();
    SmallVector<int64_t> shape(type.getShape());
    unsigned along = static_cast<unsigned>(dim);
    if (panels) {
      shape.back() /= width;
      shape.push_back(width);
    }
    Value acc = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    int64_t offset = 0;
    for (Value source : sources) {
      auto sourceType = cast<RankedTensorType>(source.getType());
      SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), sizes, strides(shape.size(), b.getIndexAttr(1));
      for (int64_t extent : sourceType.getShape())
        sizes.push_back(b.getIndexAttr(extent));
      offsets[along] = b.getIndexAttr(offset);
      offset += sourceType.getShape()[along];
      acc = tensor::InsertSliceOp::create(b, loc, source, acc, offsets, sizes, strides);
    }
    if (panels) {
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d + 1 < rank; ++d)
        groups.push_back({d});
      groups.push_back({rank - 1, rank});
      acc = tensor::CollapseShapeOp::create(b, loc, type, acc, groups);
    }
    concat.replaceAllUsesWith(acc);
    SmallVector<Operation *> views;
    for (Value in : concat.getInputs())
      if (Operation *def = in.getDefiningOp(); def && isa<tensor::CollapseShapeOp>(def))
        views.push_back(def);
    concat.erase();
    for (Operation *view : views)
      if (view->use_empty())
        view->erase();
  }
}

// A reader that can take the interior of a padded tensor in place of the tensor: an
// elementwise op, a contraction (a 1x1 convolution; its kernel then keeps its rows apart, see
// collapseRows) or a window op (a convolution, a pooling) reading it as an input. Not a graph
// output, a pad or an accumulator, which need the unpadded tensor.
bool readsInterior(OpOperand &use) {
  auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!reader || !reader.isDpsInput(&use))
    return false;
  return allParallel(reader) || linalg::isaContractionOpInterface(reader) || packedConvDims(reader) ||
         isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
             linalg::PoolingNhwcSumOp>(reader.getOperation());
}

// A pad whose source has other readers too (a residual block's input: the next convolution
// reads it padded, the residual add as it is): the other readers read the interior of the
// padded tensor instead (a view their kernels take in, see readsInterior), so that the source
// is the pad's alone and its producer computes it straight into the padded tensor
// (padProducer): no unpadded tensor, no copy (resnet18's pads were 7 copy kernels, 1.7% of its
// run at 1 thread, 2.6% at 2). A source viewed as channels (the collapse of a packed result)
// is padded as panels, and readers of that view read the interior of the padded view. Not
// readers through another reshape (a max pool's result viewed as panels by a residual add): in
// resnet18 that made the pool's padded result live beside its 3.2 MB input, the arena's peak
// (4,014,080 -> 4,072,448 bytes).
void padsShareProducers(func::FuncOp graph, const FusesIntoKernel &fuses) {
  SmallVector<tensor::PadOp> pads;
  graph.walk([&](tensor::PadOp pad) {
    if (pad->getParentOp() == graph)
      pads.push_back(pad);
  });
  MLIRContext *ctx = graph.getContext();
  for (tensor::PadOp pad : pads) {
    if (!isStaticConstantPad(pad) || ShapedType::isDynamicShape(pad.getStaticLow()) ||
        ShapedType::isDynamicShape(pad.getStaticHigh()))
      continue;
    // A depthwise convolution or pooling computes this pad's border itself (borderPad).
    if (pad->hasOneUse())
      if (auto window = dyn_cast<linalg::LinalgOp>(*pad->getUsers().begin()); window && borderPad(window) == pad)
        continue;
    auto view = pad.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    Value source = view ? view.getSrc() : pad.getSource();
    linalg::LinalgOp producer = partProducer(source, fuses);
    if (!producer)
      continue;
    auto sourceType = cast<RankedTensorType>(source.getType());
    int64_t rank = sourceType.getRank();
    SmallVector<int64_t> low, high;
    if (view) {
      // The pad's padding, of the view's dimensions, as the source's.
      SmallVector<int64_t> viewLow(pad.getStaticLow()), viewHigh(pad.getStaticHigh());
      low.assign(rank, 0);
      high.assign(rank, 0);
      bool ok = true;
      for (auto [d, group] : llvm::enumerate(view.getReassociationIndices())) {
        if (group.size() == 1) {
          low[group[0]] = viewLow[d];
          high[group[0]] = viewHigh[d];
        } else if (viewLow[d] || viewHigh[d]) {
          ok = false;
        }
      }
      if (!ok)
        continue;
    } else {
      low.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
      high.assign(pad.getStaticHigh().begin(), pad.getStaticHigh().end());
    }
    // The other readers: of the source, or of its channels view.
    SmallVector<OpOperand *> direct, ofView;
    bool ok = true;
    for (OpOperand &use : source.getUses()) {
      Operation *user = use.getOwner();
      if (user == pad.getOperation() || (view && user == view.getOperation()))
        continue;
      if (readsInterior(use) && user->getParentOp() == graph)
        direct.push_back(&use);
      else
        ok = false;
    }
    if (view)
      for (OpOperand &use : view->getUses()) {
        if (use.getOwner() == pad.getOperation())
          continue;
        if (readsInterior(use) && use.getOwner()->getParentOp() == graph)
          ofView.push_back(&use);
        else
          ok = false;
      }
    if (!ok || (direct.empty() && ofView.empty()))
      continue;

    OpBuilder b(ctx);
    b.setInsertionPointAfter(producer);
    Location loc = pad.getLoc();
    Value constant = b.clone(*pad.getConstantPaddingValue().getDefiningOp())->getResult(0);
    SmallVector<int64_t> shape(sourceType.getShape());
    for (int64_t d = 0; d < rank; ++d)
      shape[d] += low[d] + high[d];
    auto paddedType = RankedTensorType::get(shape, sourceType.getElementType());
    auto padded = tensor::PadOp::create(b, loc, paddedType, source, getAsIndexOpFoldResult(ctx, low),
                                        getAsIndexOpFoldResult(ctx, high), constant);
    // The interior of `of` (padded by `at` in front) as a value of `type`.
    auto interior = [&](Value of, ArrayRef<int64_t> at, RankedTensorType type) -> Value {
      SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(ctx, type.getShape()),
                                ones(type.getRank(), b.getIndexAttr(1));
      auto slice = tensor::ExtractSliceOp::create(b, loc, type, of, getAsIndexOpFoldResult(ctx, at), sizes, ones);
      slice->setAttr(kInteriorViewAttr, b.getUnitAttr());
      return slice.getResult();
    };
    if (!direct.empty()) {
      Value inside = interior(padded, low, sourceType);
      for (OpOperand *use : direct)
        use->set(inside);
    }
    Value replacement = padded.getResult();
    if (view) {
      replacement =
          tensor::CollapseShapeOp::create(b, loc, pad.getResultType(), padded, view.getReassociationIndices());
      if (!ofView.empty()) {
        Value inside = interior(replacement, pad.getStaticLow(), view.getResultType());
        for (OpOperand *use : ofView)
          use->set(inside);
      }
    }
    pad.getResult().replaceAllUsesWith(replacement);
    pad.erase();
    if (view && view->use_empty())
      view.erase();
  }
}

// The ops computed inside the kernel of an elementwise op with it as one row kernel (softmax,
// layer normalization; see RowKernel.h): producers read only by the group, added one at a time
// while the group stays a row kernel, not taken by another kernel (`taken`). Empty unless the
// group has a reduction.
SmallVector<Operation *> rowGroup(Operation *anchor, const llvm::SmallPtrSetImpl<Operation *> &taken) {
  auto last = dyn_cast<linalg::GenericOp>(anchor);
  if (!last || !allParallel(last) || last->getNumResults() != 1)
    return {};
  SmallVector<linalg::GenericOp> group = {last};
  auto sorted = [](SmallVector<linalg::GenericOp> ops) {
    llvm::sort(ops, [](linalg::GenericOp a, linalg::GenericOp b) { return a->isBeforeInBlock(b); });
    return ops;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < group.size() && !changed; ++i)
      for (Value v : group[i]->getOperands()) {
        auto producer = v.getDefiningOp<linalg::GenericOp>();
        if (!producer || llvm::is_contained(group, producer) || taken.contains(producer) || isCloneable(producer) ||
            producer->getBlock() != anchor->getBlock() || !llvm::all_of(producer->getUsers(), [&](Operation *u) {
              return llvm::is_contained(group, u);
            }))
          continue;
        SmallVector<linalg::GenericOp> grown = group;
        grown.push_back(producer);
        grown = sorted(grown);
        if (!matchRowKernel(grown, /*requireReduction=*/false))
          continue;
        group = grown;
        changed = true;
        break;
      }
  }
  if (group.size() < 2 || !matchRowKernel(group))
    return {};
  // Outlining clones an initializer (a splat fill, a broadcast) that a member reads as an input
  // into the kernel, where it would be one more full-size value the row kernel has no place for.
  for (linalg::GenericOp op : group)
    for (Value in : op.getDpsInputs())
      if (isRecomputedInit(in.getDefiningOp()))
        return {};
  SmallVector<Operation *> members;
  for (linalg::GenericOp op : group)
    if (op != last)
      members.push_back(op);
  return members;
}

// The values `op` reads: its operands and the values its regions capture from above.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  llvm::SetVector<Value> captured;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  values.append(captured.begin(), captured.end());
  return values;
}

std::string sanitize(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  return out;
}

struct OutlineDispatchesPass
    : public mlir::hexir::impl::OutlineDispatchesBase<OutlineDispatchesPass> {
  using OutlineDispatchesBase::OutlineDispatchesBase;
  OutlineDispatchesPass(const OutlineDispatchesOptions &options, FusesIntoKernel fusesIntoKernel)
      : OutlineDispatchesBase(options) {
    if (fusesIntoKernel)
      fuses = std::move(fusesIntoKernel);
  }

  // The target's answer whether a kernel rooted at an op takes fused ops (the target's
  // TargetBackend::fusesIntoKernel); without a target (hexir-opt), the kinds every target's
  // kernels handle.
  FusesIntoKernel fuses = [](linalg::LinalgOp op) { return classifyKernel(op).has_value(); };

  // Producers computed inside their reader's kernel (see padProducer).
  llvm::SmallPtrSet<Operation *, 16> fused;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> graphs = graphFunctions(module);
    for (func::FuncOp graph : graphs)
      if (failed(outline(graph, symbols)))
        return signalPassFailure();
  }

  LogicalResult outline(func::FuncOp graph, SymbolTable &symbols) {
    // Input verification refuses non-linear indexing maps; a pass that made one would give
    // wrong tiles (KernelClassification.h), so it is an error here rather than a wrong answer.
    WalkResult linear = graph.walk([](linalg::LinalgOp op) {
      if (hasLinearIndexingMaps(op))
        return WalkResult::advance();
      op->emitError() << "internal error: '" << op->getName()
                      << "' has a non-linear indexing map, which kernel tiling would split wrongly";
      return WalkResult::interrupt();
    });
    if (linear.wasInterrupted())
      return failure();
    if (fuseProducers && padsInPlace) {
      concatsInPlace(graph, fuses);
      padsShareProducers(graph, fuses);
    }
    SmallVector<Operation *> anchors;
    graph.walk([&](Operation *op) {
      if (op->getParentOp() == graph && isAnchor(op))
        anchors.push_back(op);
    });
    // Fusion: an epilogue takes its root into its kernel, then a pad takes its producer (and
    // whatever that producer took).
    fused.clear();
    if (fuseProducers) {
      for (Operation *anchor : anchors)
        if (Operation *root = epilogueRoot(anchor, fuses, narrowingEpilogues))
          fused.insert(root);
      // A depthwise convolution or pooling computes its border itself from the unpadded
      // tensor: its pad joins its kernel (no padded tensor, no copy; see borderPad).
      llvm::SmallPtrSet<Operation *, 16> borderPads;
      if (padsInPlace)
        for (Operation *anchor : anchors)
          if (auto window = dyn_cast<linalg::LinalgOp>(anchor))
            if (tensor::PadOp pad = borderPad(window))
              borderPads.insert(pad);
      fused.insert(borderPads.begin(), borderPads.end());
      // The run-time packing of a matmul's B into panels joins every kernel that reads the
      // panels (each packs a block where it uses it: B is read once, never written packed).
      if (packInKernelMaxRows > 0)
        for (Operation *anchor : anchors)
          if (packsPanelsInKernel(anchor, packInKernelMaxRows))
            fused.insert(anchor);
      if (padsInPlace)
        for (Operation *anchor : anchors) {
          if (Operation *producer = padProducer(anchor, fuses); producer && !borderPads.contains(anchor))
            fused.insert(producer);
          if (Operation *producer = insertProducer(anchor, fuses))
            fused.insert(producer);
        }
      // Row kernels: neither their members nor their last op may have taken another op in.
      llvm::SmallPtrSet<Operation *, 16> taken(fused.begin(), fused.end());
      for (Operation *anchor : anchors)
        if (epilogueRoot(anchor, fuses, narrowingEpilogues) || (padsInPlace && (padProducer(anchor, fuses) || insertProducer(anchor, fuses))))
          taken.insert(anchor);
      for (Operation *anchor : llvm::reverse(anchors)) {
        if (taken.contains(anchor))
          continue;
        for (Operation *member : rowGroup(anchor, taken)) {
          fused.insert(member);
          taken.insert(member);
        }
      }
    }
    llvm::erase_if(anchors, [&](Operation *op) { return fused.contains(op); });
    unsigned index = 0;
    for (Operation *anchor : anchors) {
      if (failed(outlineOne(graph, anchor, index++, symbols)))
        return failure();
    }
    // Producers that were cloned into every consumer are now dead.
    Block &body = graph.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if ((isCloneable(&op) || fused.contains(&op)) && op.use_empty())
        op.erase();
    return success();
  }

  LogicalResult outlineOne(func::FuncOp graph, Operation *anchor, unsigned index,
                           SymbolTable &symbols) {
    // Walk producers: cloneable ones go into the kernel (in program order), others are inputs.
    llvm::SetVector<Operation *> cloned;
    llvm::SetVector<Value> inputs;
    SmallVector<Value> worklist = readValues(anchor);
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (isCloneable(def) || fused.contains(def)) {
        if (cloned.insert(def))
          llvm::append_range(worklist, readValues(def));
      } else if (isa<TensorType>(v.getType())) {
        inputs.insert(v);
      } else {
        return anchor->emitError() << "reads a non-tensor value of type " << v.getType()
                                   << " from outside; Hexir can only pass tensors to kernels";
      }
    }
    // Operands in first-use order for a stable kernel signature.
    SmallVector<Value> orderedInputs;
    llvm::SetVector<Value> seen;
    std::function<void(Operation *)> collect = [&](Operation *op) {
      for (Value v : readValues(op)) {
        if (inputs.contains(v) && seen.insert(v))
          orderedInputs.push_back(v);
        else if (Operation *d = v.getDefiningOp(); d && cloned.contains(d))
          collect(d);
      }
    };
    collect(anchor);

    // Kernels go at the end of the module, in dispatch order.
    OpBuilder b = OpBuilder::atBlockEnd(graph->getParentOfType<ModuleOp>().getBody());
    // Named after the op doing the work: a fused matmul or convolution rather than its
    // epilogue or pad.
    Operation *named = anchor;
    for (Operation *op : cloned)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && fused.contains(op) && !allParallel(linalgOp))
        named = op;
    std::string name = (graph.getSymName() + "_dispatch_" + Twine(index) + "_" +
                        sanitize(named->getName().stripDialect()))
                           .str();
    SmallVector<Type> inputTypes;
    for (Value v : orderedInputs)
      inputTypes.push_back(v.getType());
    auto kernelType = b.getFunctionType(inputTypes, anchor->getResultTypes());
    auto kernel = func::FuncOp::create(b, anchor->getLoc(), name, kernelType);
    kernel->setAttr(kKernelAttrName, b.getUnitAttr());
    for (unsigned i = 0; i < orderedInputs.size(); ++i)
      kernel.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                        b.getBoolAttr(false));
    symbols.insert(kernel); // renames on a clash

    Block *entry = kernel.addEntryBlock();
    OpBuilder kb = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(orderedInputs, entry->getArguments()))
      map.map(v, arg);
    SmallVector<Operation *> clonedInOrder(cloned.begin(), cloned.end());
    llvm::sort(clonedInOrder, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
    for (Operation *op : clonedInOrder)
      kb.clone(*op, map);
    Operation *newAnchor = kb.clone(*anchor, map);
    func::ReturnOp::create(kb, anchor->getLoc(), newAnchor->getResults());

    OpBuilder gb(anchor);
    auto call = CallTirOp::create(gb, anchor->getLoc(), anchor->getResultTypes(),
                                  kernel.getSymName(), orderedInputs);
    anchor->replaceAllUsesWith(call.getResults());
    anchor->erase();
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::hexir::createOutlineDispatches(const OutlineDispatchesOptions &options,
                                                          std::function<bool(linalg::LinalgOp)> fusesIntoKernel) {
  return std::make_unique<OutlineDispatchesPass>(options, std::move(fusesIntoKernel));
}

//===- ConvertToChannelsLast.cpp - NHWC inside the graph ------------------===//
//
// ONNX graphs are NCHW, but a convolution vectorizes along its channels only when they are
// the innermost dimension (and MLIR's NCHW convolution vectorization is wrong for filter tiles
// above one). As ONNX Runtime does internally, the graph is computed channels-last and
// converted at its edges:
//   1. every NCHW convolution, depthwise convolution and pooling becomes its NHWC form between
//      two linalg.transpose ops (filters of constant weights are transposed at compile time);
//   2. transposes then travel until they cancel: a generic op reads through a transpose by
//      permuting its indexing map; an elementwise generic whose result is transposed, or whose
//      inputs are all read through the same permutation, is recomputed in the permuted layout;
//      a transpose moves above a pad, a fill or an empty tensor, and out of a concatenation;
//      two transposes compose.
// What remains are transposes at the graph's edges (the input image) and before the few ops
// that need a given layout.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "Dialect/Functions.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::hexir {
#define GEN_PASS_DEF_CONVERTTOCHANNELSLAST
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

constexpr int64_t kToNhwc[] = {0, 2, 3, 1};
constexpr int64_t kToNchw[] = {0, 3, 1, 2};

SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv(perm.size());
  for (size_t j = 0; j < perm.size(); ++j)
    inv[perm[j]] = j;
  return inv;
}

// The type of linalg.transpose(v, perm): result dimension j is dimension perm[j] of v.
RankedTensorType transposedType(Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return RankedTensorType::get(shape, type.getElementType());
}

bool isIdentity(ArrayRef<int64_t> perm) { return llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())); }

// linalg.transpose(v, perm), or v itself for the identity.
Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  if (isIdentity(perm))
    return v;
  RankedTensorType type = transposedType(v, perm);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, empty, perm)->getResult(0);
}

// A generic op's indexing map for an operand read through transpose(x, perm), as a map for x.
AffineMap readThroughTranspose(AffineMap map, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv = inversePermutation(perm);
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < static_cast<int64_t>(perm.size()); ++k)
    exprs.push_back(map.getResult(inv[k]));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs, map.getContext());
}

//===----------------------------------------------------------------------===//
// 1. NCHW window ops -> NHWC
//===----------------------------------------------------------------------===//

// Rewrites `op` (inputs: image, filter or window; init) as `nhwc(transpose(image), filter',
// transpose(init))` transposed back, where filter' is the filter transposed by `filterPerm`.
template <typename NhwcOp>
void convertWindowOp(RewriterBase &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> imagePerm,
                     std::optional<ArrayRef<int64_t>> filterPerm, DenseIntElementsAttr strides,
                     DenseIntElementsAttr dilations) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value image = transpose(rewriter, loc, op.getDpsInputOperand(0)->get(), imagePerm);
  Value filter = op.getDpsInputOperand(1)->get();
  if (filterPerm)
    filter = transpose(rewriter, loc, filter, *filterPerm);
  else if (auto empty = filter.getDefiningOp<tensor::EmptyOp>(); empty) // pooling window
    filter = tensor::EmptyOp::create(rewriter, loc, empty.getType().getShape(), empty.getType().getElementType());
  Value init = transpose(rewriter, loc, op.getDpsInitOperand(0)->get(), imagePerm);
  SmallVector<Type> types = {init.getType()};
  SmallVector<Value> ins = {image, filter}, outs = {init};
  Value out = NhwcOp::create(rewriter, loc, types, ins, outs, strides, dilations)->getResult(0);
  rewriter.replaceOp(op, transpose(rewriter, loc, out, inversePermutation(imagePerm)));
}

void convertWindowOps(func::FuncOp fn) {
  IRRewriter rewriter(fn.getContext());
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) {
    if (isa<linalg::Conv2DNchwFchwOp, linalg::DepthwiseConv2DNchwChwOp, linalg::PoolingNchwMaxOp,
            linalg::PoolingNchwSumOp, linalg::Conv2DNhwcFhwcOp>(op) &&
        cast<linalg::LinalgOp>(op).hasPureTensorSemantics())
      ops.push_back(op);
  });
  static constexpr int64_t kFchwToHwcf[] = {2, 3, 1, 0};
  static constexpr int64_t kChwToHwc[] = {1, 2, 0};
  static constexpr int64_t kFhwcToHwcf[] = {1, 2, 3, 0};
  static constexpr int64_t kIdentity[] = {0, 1, 2, 3};
  for (Operation *op : ops) {
    if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op))
      convertWindowOp<linalg::Conv2DNhwcHwcfOp>(rewriter, conv, kToNhwc, ArrayRef<int64_t>(kFchwToHwcf),
                                                conv.getStrides(), conv.getDilations());
    else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(op))
      convertWindowOp<linalg::DepthwiseConv2DNhwcHwcOp>(rewriter, dw, kToNhwc, ArrayRef<int64_t>(kChwToHwc),
                                                        dw.getStrides(), dw.getDilations());
    else if (auto max = dyn_cast<linalg::PoolingNchwMaxOp>(op))
      convertWindowOp<linalg::PoolingNhwcMaxOp>(rewriter, max, kToNhwc, std::nullopt, max.getStrides(),
                                                max.getDilations());
    else if (auto sum = dyn_cast<linalg::PoolingNchwSumOp>(op))
      convertWindowOp<linalg::PoolingNhwcSumOp>(rewriter, sum, kToNhwc, std::nullopt, sum.getStrides(),
                                                sum.getDilations());
    else if (auto fhwc = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op)) // TOSA: only the filter moves
      convertWindowOp<linalg::Conv2DNhwcHwcfOp>(rewriter, fhwc, kIdentity, ArrayRef<int64_t>(kFhwcToHwcf),
                                                fhwc.getStrides(), fhwc.getDilations());
  }
}

//===----------------------------------------------------------------------===//
// 2. Transpose propagation
//===----------------------------------------------------------------------===//

// transpose(transpose(x, p1), p2) = transpose(x, p1[p2]); the identity folds away.
struct ComposeTransposes : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    if (isIdentity(op.getPermutation())) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    auto inner = op.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPermutation())
      perm.push_back(inner.getPermutation()[p]);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), inner.getInput(), perm));
    return success();
  }
};

// Transposes of constants, empty tensors, fills and single-use pads become the op itself in
// the transposed layout.
struct TransposeProducer : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Value input = op.getInput();
    ArrayRef<int64_t> perm = op.getPermutation();
    RankedTensorType type = transposedType(input, perm);
    Location loc = op.getLoc();
    if (input.getDefiningOp<tensor::EmptyOp>()) {
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(), type.getElementType());
      return success();
    }
    if (auto fill = input.getDefiningOp<linalg::FillOp>();
        fill && fill.hasPureTensorSemantics() && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
      rewriter.replaceOp(op, linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)->getResult(0));
      return success();
    }
    if (auto cst = input.getDefiningOp<arith::ConstantOp>()) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      // Any element of whole bytes (f32 filters, int8 ones of a quantized model), moved as bytes.
      int64_t bits = dense && dense.getElementType().isIntOrFloat() ? dense.getElementType().getIntOrFloatBitWidth() : 0;
      if (!dense || bits % 8 != 0 || bits == 0)
        return failure();
      if (dense.isSplat()) {
        rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, dense.resizeSplat(type));
        return success();
      }
      // out[j...] = in[perm...]: walk the output in order, gather from the input's strides.
      auto inType = cast<RankedTensorType>(dense.getType());
      int64_t rank = inType.getRank(), bytes = bits / 8;
      SmallVector<int64_t> inStrides(rank, 1);
      for (int64_t d = rank - 2; d >= 0; --d)
        inStrides[d] = inStrides[d + 1] * inType.getDimSize(d + 1);
      ArrayRef<char> raw = dense.getRawData();
      std::vector<char> out(raw.size());
      SmallVector<int64_t> index(rank, 0);
      for (int64_t i = 0, n = inType.getNumElements(); i < n; ++i) {
        int64_t offset = 0;
        for (int64_t j = 0; j < rank; ++j)
          offset += index[j] * inStrides[perm[j]];
        std::memcpy(&out[i * bytes], &raw[offset * bytes], bytes);
        for (int64_t j = rank - 1; j >= 0 && ++index[j] == type.getDimSize(j); --j)
          index[j] = 0;
      }
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                     DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out)));
      return success();
    }
    if (auto pad = input.getDefiningOp<tensor::PadOp>(); pad && pad->hasOneUse()) {
      Value padValue = pad.getConstantPaddingValue();
      if (!padValue)
        return failure();
      SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
      SmallVector<OpFoldResult> newLow, newHigh;
      for (int64_t p : perm) {
        newLow.push_back(low[p]);
        newHigh.push_back(high[p]);
      }
      Value source = transpose(rewriter, loc, pad.getSource(), perm);
      rewriter.replaceOpWithNewOp<tensor::PadOp>(op, type, source, newLow, newHigh, padValue);
      return success();
    }
    return failure();
  }
};

// concat(transpose(x_i, p), dim) = transpose(concat(x_i, p[dim]), p).
struct TransposeOutOfConcat : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ConcatOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> sources;
    std::optional<SmallVector<int64_t>> perm;
    for (Value in : op.getInputs()) {
      auto t = in.getDefiningOp<linalg::TransposeOp>();
      if (!t || (perm && !llvm::equal(*perm, t.getPermutation())))
        return failure();
      perm = llvm::to_vector(t.getPermutation());
      sources.push_back(t.getInput());
    }
    auto concat = tensor::ConcatOp::create(rewriter, op.getLoc(), (*perm)[op.getDim()], sources);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), concat, *perm));
    return success();
  }
};

// A generic op reads a transposed operand straight from the transpose's input.
struct ReadThroughTranspose : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    SmallVector<Value> inputs;
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto t = in->get().getDefiningOp<linalg::TransposeOp>();
      if (!t || !t.hasPureTensorSemantics()) {
        inputs.push_back(in->get());
        continue;
      }
      unsigned i = in->getOperandNumber();
      maps[i] = readThroughTranspose(maps[i], t.getPermutation());
      inputs.push_back(t.getInput());
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

// An elementwise generic op (all loops parallel, identity output map, an empty init, no
// linalg.index) can be recomputed in another layout.
bool isRelayoutable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || !op.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>())
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  bool usesIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { usesIndex = true; });
  return !usesIndex;
}

// `op` with its loops renamed so that it produces transpose(result, perm) directly.
linalg::GenericOp relayout(RewriterBase &rewriter, linalg::GenericOp op, ArrayRef<int64_t> perm) {
  MLIRContext *ctx = op.getContext();
  unsigned n = op.getNumLoops();
  // New loop j iterates old loop perm[j]: old loop k is new loop inv[k].
  SmallVector<int64_t> inv = inversePermutation(perm);
  SmallVector<AffineExpr> oldInNew;
  for (unsigned k = 0; k < n; ++k)
    oldInNew.push_back(getAffineDimExpr(inv[k], ctx));
  AffineMap rename = AffineMap::get(n, 0, oldInNew, ctx);
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(in).compose(rename));
  maps.push_back(AffineMap::getMultiDimIdentityMap(n, ctx));
  RankedTensorType type = transposedType(op->getResult(0), perm);
  rewriter.setInsertionPoint(op);
  Value empty = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(rewriter, op.getLoc(), TypeRange{type}, op.getDpsInputs(),
                                           ValueRange{empty}, maps, op.getIteratorTypesArray());
  rewriter.cloneRegionBefore(op.getRegion(), generic.getRegion(), generic.getRegion().end());
  return generic;
}

// The permutation p of a full-rank permutation map (result j reads loop p[j]).
std::optional<SmallVector<int64_t>> fullRankPermutation(AffineMap map, unsigned numLoops) {
  if (!map.isPermutation() || map.getNumResults() != numLoops)
    return std::nullopt;
  SmallVector<int64_t> p;
  for (unsigned j = 0; j < map.getNumResults(); ++j)
    p.push_back(map.getDimPosition(j));
  return p;
}

// Full-rank inputs `op` reads out of order, if it were computed in layout `perm` (identity:
// as it is).
int stridedReads(linalg::GenericOp op, ArrayRef<int64_t> perm) {
  int count = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto p = fullRankPermutation(op.getMatchingIndexingMap(in), op.getNumLoops());
    // Result j reads old loop p[j], which is new loop inv[p[j]]: in order iff p == perm.
    if (p && !llvm::equal(*p, perm))
      ++count;
  }
  return count;
}

// Recomputes an elementwise op in another layout when that removes transposes (users that
// transpose its result to that layout; one transpose back is added for users that cannot read
// through it), or, at an equal count, makes more of its full-rank reads contiguous. Both only
// move layout changes forward through the graph, so the rewriting ends.
struct RelayoutElementwise : OpRewritePattern<linalg::GenericOp> {
  RelayoutElementwise(MLIRContext *ctx, int64_t *count) : OpRewritePattern(ctx), count(count) {}
  int64_t *count;  // rewrites so far (a ping-pong shows as many more than ops)

  static bool beneficial(linalg::GenericOp op, ArrayRef<int64_t> perm) {
    int removed = 0;
    bool needsBack = false;
    for (OpOperand &use : op->getUses()) {
      auto t = dyn_cast<linalg::TransposeOp>(use.getOwner());
      auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (t && llvm::equal(t.getPermutation(), perm))
        ++removed;
      else if (!reader || !reader.isDpsInput(&use))  // (a generic reader reads it through its map)
        needsBack = true;
    }
    int delta = (needsBack ? 1 : 0) - removed;
    if (delta != 0)
      return delta < 0;
    SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, perm.size()));
    return stridedReads(op, perm) < stridedReads(op, identity);
  }

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!isRelayoutable(op))
      return failure();
    SmallVector<SmallVector<int64_t>> candidates;
    for (Operation *user : op->getUsers())
      if (auto t = dyn_cast<linalg::TransposeOp>(user); t && t.hasPureTensorSemantics())
        candidates.push_back(llvm::to_vector(t.getPermutation()));
    for (OpOperand *in : op.getDpsInputOperands())
      if (auto p = fullRankPermutation(op.getMatchingIndexingMap(in), op.getNumLoops()))
        candidates.push_back(*p);
    std::optional<SmallVector<int64_t>> perm;
    for (const SmallVector<int64_t> &c : candidates)
      if (!isIdentity(c) && beneficial(op, c)) {
        perm = c;
        break;
      }
    if (!perm)
      return failure();
    ++*count;
    linalg::GenericOp generic = relayout(rewriter, op, *perm);
    Value result = generic->getResult(0);
    Value back;
    SmallVector<int64_t> inverse = inversePermutation(*perm);
    for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
      auto t = dyn_cast<linalg::TransposeOp>(use.getOwner());
      if (t && llvm::equal(t.getPermutation(), *perm)) {
        rewriter.replaceOp(t, result);
        continue;
      }
      // A generic reader reads the new layout through its indexing map, as ReadThroughTranspose
      // would make it: a transpose back would be one more that this pattern, on the new op,
      // would count as removable and undo (a ping-pong between two layouts).
      auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (reader && reader.hasPureTensorSemantics() && reader.isDpsInput(&use)) {
        SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
        unsigned i = use.getOperandNumber();
        maps[i] = readThroughTranspose(maps[i], inverse);
        rewriter.modifyOpInPlace(reader, [&] {
          use.set(result);
          reader.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
        });
        continue;
      }
      if (!back) {
        rewriter.setInsertionPointAfter(generic);
        back = transpose(rewriter, op.getLoc(), result, inverse);
      }
      rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(back); });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

// transpose(concat(g_1 .. g_n)) where every g_i is an elementwise op read only by the concat
// (an activation between a convolution and a channel concat, as in SqueezeNet's fire modules):
// each g_i computes its part in the transposed layout instead, and the concat runs there. No
// transpose is left (the activations then read the convolutions' NHWC results contiguously),
// and none is created, so this does not fight TransposeOutOfConcat.
struct TransposeIntoConcatOfElementwise : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op, PatternRewriter &rewriter) const override {
    auto concat = op.getInput().getDefiningOp<tensor::ConcatOp>();
    if (!op.hasPureTensorSemantics() || !concat || !concat->hasOneUse())
      return failure();
    for (Value in : concat.getInputs()) {
      auto g = in.getDefiningOp<linalg::GenericOp>();
      if (!g || !g->hasOneUse() || !isRelayoutable(g))
        return failure();
    }
    ArrayRef<int64_t> perm = op.getPermutation();
    SmallVector<Value> parts;
    for (Value in : concat.getInputs())
      parts.push_back(relayout(rewriter, in.getDefiningOp<linalg::GenericOp>(), perm)->getResult(0));
    int64_t dim = inversePermutation(perm)[concat.getDim()];
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, tensor::ConcatOp::create(rewriter, concat.getLoc(), dim, parts).getResult());
    return success();
  }
};

struct ConvertToChannelsLastPass
    : public mlir::hexir::impl::ConvertToChannelsLastBase<ConvertToChannelsLastPass> {
  using ConvertToChannelsLastBase::ConvertToChannelsLastBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      convertWindowOps(fn);
      RewritePatternSet patterns(ctx);
      int64_t relayouts = 0;
      patterns.add<ComposeTransposes, TransposeProducer, TransposeOutOfConcat, ReadThroughTranspose,
                   TransposeIntoConcatOfElementwise>(ctx);
      patterns.add<RelayoutElementwise>(ctx, &relayouts);
      // Every rewrite keeps the graph's meaning, so stopping early only leaves transposes in
      // place; the bounds keep a layout ping-pong the cost model missed from running forever.
      GreedyRewriteConfig config;
      config.setMaxIterations(64);
      config.setMaxNumRewrites(
          maxRewrites > 0
              ? static_cast<int64_t>(maxRewrites)
              : std::max<int64_t>(10000, 50 * static_cast<int64_t>(fn.getBody().front().getOperations().size())));
      (void)applyPatternsGreedily(fn, std::move(patterns), config);
      // Layout changes only move forward, so each elementwise op is recomputed about once
      // (efficientnet_b0's QDQ graph: 523 times for 577 ops). Many more means two rewrites
      // undid each other until the bound stopped them (the driver reports that as success):
      // the graph is still right, but compilation was slow. Say so.
      int64_t generics = 0;
      fn.walk([&](linalg::GenericOp) { ++generics; });
      if (relayouts > 4 * generics + 64)
        fn.emitWarning() << "channels-last layout propagation recomputed elementwise ops " << relayouts
                         << " times for " << generics
                         << " ops: two layouts alternated until the rewrite bound (slow compilation; please report it)";
    }
  }
};

} // namespace

//===- KernelClassification.cpp - what kind of kernel an op roots --------===//
#include "Transforms/KernelClassification.h"
#include "Transforms/DotGroups.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace mlir::hexir {

bool isEmptyTensor(Value v) {
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
    v = collapse.getSrc();
  return v.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

// Ops that only initialize an accumulator: a fill, a copy, or an elementwise op with an empty
// init (a broadcast bias). They run in the root's workgroups, vectorized row by row.
bool hasLinearIndexingMaps(linalg::LinalgOp op) {
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr result : map.getResults()) {
      bool linear = true;
      result.walk([&](AffineExpr e) {
        linear &= e.getKind() != AffineExprKind::FloorDiv && e.getKind() != AffineExprKind::CeilDiv &&
                  e.getKind() != AffineExprKind::Mod;
      });
      if (!linear)
        return false;
    }
  return true;
}

bool isInitializer(Operation &op) {
  if (isa<linalg::FillOp, linalg::CopyOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumDpsInits() == 1 && generic.getNumParallelLoops() == generic.getNumLoops() &&
         isEmptyTensor(generic.getDpsInits()[0]) &&
         generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity();
}

namespace {
// A copy of three parallel loops through permutations into tensor.empty: how
// PackMatmulWeights packs a run-time B into panels.
bool isPanelCopy(linalg::GenericOp copy) {
  if (!copy || copy.getNumDpsInputs() != 1 || copy.getNumDpsInits() != 1 || copy.getNumLoops() != 3 ||
      copy.getNumParallelLoops() != 3 || !copy.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      !llvm::all_of(copy.getIndexingMapsArray(), [](AffineMap m) { return m.isPermutation(); }))
    return false;
  Block &body = copy.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return body.getOperations().size() == 1 && yield.getNumOperands() == 1 && yield.getOperand(0) == body.getArgument(0);
}
} // namespace

bool isPanelPack(Operation *op) {
  auto copy = dyn_cast<linalg::GenericOp>(op);
  if (!copy || !isPanelCopy(copy) || op->use_empty())
    return false;
  return llvm::all_of(op->getUses(), [](OpOperand &use) {
    auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!reader || !reader.isDpsInput(&use) || !linalg::isaContractionOpInterface(reader))
      return false;
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(reader);
    return succeeded(dims) && dims->n.size() == 2;
  });
}

bool packsPanelsInKernel(Operation *op, int64_t maxRows) {
  return isPanelPack(op) && llvm::all_of(op->getUsers(), [&](Operation *user) {
    auto reader = cast<linalg::LinalgOp>(user);
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(reader);
    SmallVector<int64_t> ranges = reader.getStaticLoopRanges();
    int64_t rows = 1;
    for (unsigned d : llvm::concat<const unsigned>(dims->batch, dims->m))
      rows *= ranges[d];
    return rows <= maxRows;
  });
}

linalg::GenericOp panelPackOf(linalg::LinalgOp op) {
  for (Value v : op.getDpsInputs()) {
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>())
      v = slice.getSource();
    auto copy = v.getDefiningOp<linalg::GenericOp>();
    if (copy && isPanelCopy(copy))
      return copy;
  }
  return nullptr;
}

namespace {
// Whether every input has one element type of dot-product groups (int8 or bf16), `g` as its
// innermost index, and loop `g` is one group (DotGroups.h).
bool readsDotGroups(linalg::LinalgOp op, unsigned g) {
  Type element = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  if (!isDotGroupSize(element, op.getStaticLoopRanges()[g]))
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    AffineMap map = op.getMatchingIndexingMap(in);
    return getElementTypeOrSelf(in->get().getType()) == element && map.getNumResults() > 0 &&
           map.getResult(map.getNumResults() - 1) == getAffineDimExpr(g, op.getContext());
  });
}
} // namespace

std::optional<unsigned> dotGroupLoop(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 2 || !readsDotGroups(op, dims->k[1]))
    return std::nullopt;
  return dims->k[1];
}

std::optional<unsigned> dotGroupConvLoop(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op) || op.getNumLoops() != 9 || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getIteratorTypesArray()[8] != utils::IteratorType::reduction || !readsDotGroups(op, 8))
    return std::nullopt;
  return 8u;
}

// A convolution with a packed filter (PackConvFilters): a generic op over loops
// (n, oh, ow, p, fi, kh, kw, c) reading I[n, oh*sh + kh*dh, ow*sw + kw*dw, c] and
// P[p, kh, kw, c, fi] into O[n, oh, ow, p, fi]; or, with dot-product groups (DotGroups.h),
// over (n, oh, ow, p, fi, kh, kw, cg, g) reading IG[n, ..., ..., cg, g] and
// P[p, kh, kw, cg, fi, g].
std::optional<linalg::ConvolutionDimensions> packedConvDims(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op) || op.getNumDpsInputs() != 2)
    return std::nullopt;
  if (op.getNumLoops() == 9) {
    // The group is a second input channel loop; seen without it, the rest is the
    // packed convolution's own structure.
    std::optional<unsigned> g = dotGroupConvLoop(op);
    if (!g)
      return std::nullopt;
    MLIRContext *ctx = op.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap image = maps[0];
    if (image.getNumResults() != 5 || image.getResult(0) != d(0) || image.getResult(3) != d(7) ||
        image.getResult(4) != d(8) || maps[1] != AffineMap::get(9, 0, {d(3), d(5), d(6), d(7), d(4), d(8)}, ctx) ||
        maps[2] != AffineMap::get(9, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx))
      return std::nullopt;
    linalg::ConvolutionDimensions dims;
    dims.batch = {0};
    dims.outputImage = {1, 2};
    dims.outputChannel = {3, 4};
    dims.filterLoop = {5, 6};
    dims.inputChannel = {7, 8};
    // Strides and dilations: the coefficients of oh, kh (ow, kw) in the image's rows (columns).
    for (unsigned j : {1u, 2u}) {
      AffineExpr e = image.getResult(j);
      auto coefficient = [&](unsigned dim) -> int64_t {
        SmallVector<AffineExpr> values;
        for (unsigned i = 0; i < 9; ++i)
          values.push_back(getAffineConstantExpr(i == dim ? 1 : 0, ctx));
        auto c = dyn_cast<AffineConstantExpr>(e.replaceDims(values));
        return c ? c.getValue() : 0;
      };
      int64_t stride = coefficient(j), dilation = coefficient(j + 4);
      if (stride <= 0 || dilation <= 0 || e != d(j) * stride + d(j + 4) * dilation)
        return std::nullopt;
      dims.strides.push_back(stride);
      dims.dilations.push_back(dilation);
    }
    return dims;
  }
  if (op.getNumLoops() != 8 || !linalg::isaConvolutionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims = linalg::inferConvolutionDims(op);
  if (failed(dims))
    return std::nullopt;
  auto is = [](ArrayRef<unsigned> loops, std::initializer_list<unsigned> expected) {
    return llvm::equal(loops, expected);
  };
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (!is(dims->batch, {0}) || !is(dims->outputImage, {1, 2}) || !is(dims->outputChannel, {3, 4}) ||
      !is(dims->filterLoop, {5, 6}) || !is(dims->inputChannel, {7}) || !dims->depth.empty() ||
      op.getIndexingMapsArray()[1] != AffineMap::get(8, 0, {d(3), d(5), d(6), d(7), d(4)}, ctx) ||
      op.getIndexingMapsArray()[2] != AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx))
    return std::nullopt;
  return *dims;
}

namespace {
// An output map that is a permutation keeping the innermost loop innermost: the rows a
// register tile writes are contiguous (a run-time B packed into panels, looping in B's order).
bool writesInnermostInLoopOrder(AffineMap map) {
  return map.isPermutation() && map.getNumResults() > 0 &&
         map.getDimPosition(map.getNumResults() - 1) == map.getNumDims() - 1;
}
} // namespace

std::optional<KernelKind> classifyKernel(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r) || r < 1; }))
    return std::nullopt;
  // Contractions with one reduction loop and one or two column loops (packed weights: panels
  // and columns in a panel).
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
    if (failed(dims) || dims->n.empty() || dims->n.size() > 2 ||
        !(dims->k.size() == 1 || (dims->k.size() == 2 && dotGroupLoop(op))))
      return std::nullopt;
    return KernelKind::Contraction;
  }
  // Channels-last windows: loops (n, oh, ow, f, kh, kw, c) for a convolution (or, with a
  // packed filter, (n, oh, ow, p, fi, kh, kw, c)), (n, oh, ow, c, kh, kw) for depthwise and
  // pooling.
  if (isa<linalg::Conv2DNhwcHwcfOp>(op) || packedConvDims(op))
    return KernelKind::Conv;
  if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return KernelKind::Depthwise;
  if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op))
    return KernelKind::Pooling;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isProjectedPermutation(); }) ||
      !llvm::all_of(generic.getBody()->without_terminator(), [](Operation &inner) {
        return isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
      }))
    return std::nullopt;
  // Elementwise: all loops parallel, results written in loop order (the innermost loop
  // innermost), inputs read through projected permutations (broadcasts and transposes).
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (op.getNumParallelLoops() == op.getNumLoops() && op.getNumLoops() > 0 && writesInnermostInLoopOrder(outMap))
    return KernelKind::Elementwise;
  // Reductions over outer dimensions (a global average pool over NHWC), where every input reads
  // the output's innermost dimension contiguously.
  if (op.getNumReductionLoops() > 0 && outMap.getNumResults() > 0 && outMap.isProjectedPermutation()) {
    unsigned v = outMap.getDimPosition(outMap.getNumResults() - 1);
    if (llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
          AffineMap m = op.getMatchingIndexingMap(in);
          return m.getNumResults() > 0 && m.getDimPosition(m.getNumResults() - 1) == v;
        }))
      return KernelKind::Reduction;
  }
  return std::nullopt;
}

SmallVector<WindowSegment> windowSegments(int64_t out, int64_t in, int64_t low, int64_t stride, int64_t dilation,
                                          int64_t window) {
  SmallVector<WindowSegment> segments;
  for (int64_t o = 0; o < out; ++o) {
    // Tap k reads input position o * stride + k * dilation - low.
    int64_t first = o * stride - low, begin = 0, end = window;
    while (begin < window && first + begin * dilation < 0)
      ++begin;
    while (end > begin && first + (end - 1) * dilation >= in)
      --end;
    if (end <= begin)
      return {};
    if (!segments.empty() && segments.back().tapStart == begin && segments.back().taps == end - begin)
      ++segments.back().size;
    else
      segments.push_back({o, 1, begin, end - begin});
  }
  return segments;
}

static SmallVector<int64_t> attrValues(linalg::LinalgOp op, StringRef name) {
  SmallVector<int64_t> values = {1, 1};
  if (auto attr = op->getAttrOfType<DenseIntElementsAttr>(name))
    values = llvm::to_vector(attr.getValues<int64_t>());
  return values;
}

SmallVector<int64_t> windowStrides(linalg::LinalgOp op) { return attrValues(op, "strides"); }
SmallVector<int64_t> windowDilations(linalg::LinalgOp op) { return attrValues(op, "dilations"); }

bool narrowsInRegisters(linalg::LinalgOp root) {
  std::optional<KernelKind> kind = classifyKernel(root);
  if (kind == KernelKind::Contraction || kind == KernelKind::Conv)
    return true;
  return (kind == KernelKind::Depthwise || kind == KernelKind::Pooling) && !borderPad(root);
}

tensor::PadOp borderPad(linalg::LinalgOp op) {
  bool max = isa<linalg::PoolingNhwcMaxOp>(op);
  if (!isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcSumOp>(op) && !max)
    return nullptr;
  auto pad = op.getDpsInputs()[0].getDefiningOp<tensor::PadOp>();
  if (!pad || !pad->hasOneUse() || !pad.getResultType().hasStaticShape() ||
      !pad.getSourceType().hasStaticShape() || !classifyKernel(op) || op->getNumResults() != 1)
    return nullptr;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (low.size() != 4 || llvm::any_of(low, ShapedType::isDynamic) || llvm::any_of(high, ShapedType::isDynamic) ||
      low[0] || high[0] || low[3] || high[3])
    return nullptr;
  FloatAttr value;
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || !matchPattern(padValue, m_Constant(&value)))
    return nullptr;
  APFloat v = value.getValue();
  // A max's windows skip the padding: right for -inf, and for another value only when the
  // accumulator starts from it too (the lowest float of tosa's pooling: a window of -inf
  // inputs then gives that value either way).
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  FloatAttr start;
  bool startsAtPad = fill && matchPattern(fill.getInputs()[0], m_Constant(&start)) &&
                     start.getValue().bitwiseIsEqual(v);
  if (max ? !(v.isNegative() && v.isInfinity()) && !startsAtPad : !v.isZero())
    return nullptr;
  auto windowType = cast<ShapedType>(op.getDpsInputs()[1].getType());
  ArrayRef<int64_t> out = cast<ShapedType>(op->getResult(0).getType()).getShape();
  ArrayRef<int64_t> in = pad.getSourceType().getShape();
  SmallVector<int64_t> strides = windowStrides(op), dilations = windowDilations(op);
  for (unsigned d = 0; d < 2; ++d)
    if (windowSegments(out[1 + d], in[1 + d], low[1 + d], strides[d], dilations[d], windowType.getDimSize(d)).empty())
      return nullptr;
  return pad;
}

} // namespace mlir::hexir

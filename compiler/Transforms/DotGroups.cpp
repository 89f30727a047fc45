//===- DotGroups.cpp - int8 weights packed for VNNI dot products ---------===//
#include "Transforms/DotGroups.h"
#include "Transforms/PackedLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Panels of whole vectors of int32 lanes (the dot product's columns: maxPanel / 2 lanes): the
// widest panel dividing n, else one-vector panels over n padded up with zero columns (a
// 1000-class classifier: 1008).
std::pair<int64_t, int64_t> dotPanel(int64_t n, int64_t maxPanel) {
  int64_t lanes = std::max<int64_t>(maxPanel / 2, 4);
  int64_t nr = n % maxPanel == 0 ? maxPanel : lanes;
  return {nr, (n + nr - 1) / nr * nr};
}

// `init` (a zero fill) widened to `padded` columns in its last dimension; null for anything else.
Value paddedZeroInit(RewriterBase &rewriter, Location loc, Value init, int64_t padded) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() || !matchPattern(fill.getInputs()[0], m_Zero()))
    return nullptr;
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = padded;
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)->getResult(0);
}

// The first `columns` of the last dimension of `v` (a copy kernel where columns were padded).
Value leadingColumns(RewriterBase &rewriter, Location loc, Value v, int64_t columns) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape().back() == columns)
    return v;
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = columns;
  SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0)),
      ones(type.getRank(), rewriter.getIndexAttr(1)), sizes;
  for (int64_t d : shape)
    sizes.push_back(rewriter.getIndexAttr(d));
  return tensor::ExtractSliceOp::create(rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v, zeros,
                                        sizes, ones);
}

// `v` modulo 2^32 as int32: the accumulators wrap (an int32 sum beyond them is not exact anyway).
int32_t wrapToInt32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// acc + zext(a) * sext(b) in int32: the body of every dot-group contraction.
void dotBody(OpBuilder &b, Location l, ValueRange args) {
  Type i32 = b.getI32Type();
  Value product = arith::MulIOp::create(b, l, arith::ExtUIOp::create(b, l, i32, args[0]),
                                        arith::ExtSIOp::create(b, l, i32, args[1]));
  linalg::YieldOp::create(b, l, arith::AddIOp::create(b, l, args[2], product).getResult());
}

// The body of an int8 dot product: acc + zext(a) * sext(b) (a unsigned, b the weights), the
// product of a VNNI vpdpbusd lane. The operand order of the multiply may be either.
bool isUnsignedBySignedDot(linalg::GenericOp op, unsigned weightsIndex) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add || body.getOperations().size() != 5)
    return false;
  Value acc = body.getArgument(op.getNumDpsInputs());
  Value product = add.getLhs() == acc ? add.getRhs() : add.getRhs() == acc ? add.getLhs() : Value();
  auto mul = product ? product.getDefiningOp<arith::MulIOp>() : nullptr;
  if (!mul)
    return false;
  auto isExt = [&](Value v, bool isSigned, unsigned arg) {
    Operation *def = v.getDefiningOp();
    bool kind = isSigned ? isa_and_nonnull<arith::ExtSIOp>(def) : isa_and_nonnull<arith::ExtUIOp>(def);
    return kind && def->getOperand(0) == body.getArgument(arg);
  };
  unsigned a = 1 - weightsIndex;
  return (isExt(mul.getLhs(), false, a) && isExt(mul.getRhs(), true, weightsIndex)) ||
         (isExt(mul.getRhs(), false, a) && isExt(mul.getLhs(), true, weightsIndex));
}

} // namespace

LogicalResult mlir::hexir::packMatmulDotGroups(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel) {
  auto loops = columnAndReduction(op);
  if (!loops || op.getNumDpsInputs() != 2)
    return failure();
  unsigned n = loops->first, k = loops->second;
  std::optional<unsigned> weightsIndex;
  DenseElementsAttr values;
  for (unsigned i = 0; i < 2; ++i) {
    OpOperand *in = op.getDpsInputOperand(i);
    AffineMap map = op.getMatchingIndexingMap(in);
    auto cst = in->get().getDefiningOp<arith::ConstantOp>();
    auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
    if (dense && dense.getElementType().isInteger(8) && map.getNumResults() == 2 && map.isProjectedPermutation() &&
        ((map.getDimPosition(0) == k && map.getDimPosition(1) == n) ||
         (map.getDimPosition(0) == n && map.getDimPosition(1) == k))) {
      weightsIndex = i;
      values = dense;
    }
  }
  if (!weightsIndex || !isUnsignedBySignedDot(op, *weightsIndex))
    return failure();
  OpOperand *weights = op.getDpsInputOperand(*weightsIndex), *lhs = op.getDpsInputOperand(1 - *weightsIndex);
  AffineMap lhsMap = op.getMatchingIndexingMap(lhs), outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto lhsType = dyn_cast<RankedTensorType>(lhs->get().getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!lhsType || !lhsType.getElementType().isInteger(8) || !outType.getElementType().isInteger(32) ||
      !lhsMap.isProjectedPermutation() || lhsMap.getNumResults() == 0 ||
      lhsMap.getDimPosition(lhsMap.getNumResults() - 1) != k || !outMap.isProjectedPermutation() ||
      outMap.getNumResults() == 0 || outMap.getDimPosition(outMap.getNumResults() - 1) != n)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t N = ranges[n], K = ranges[k];
  auto [nr, paddedN] = dotPanel(N, maxPanel);
  if (K % 4 != 0)
    return failure();
  int64_t NO = paddedN / nr, K4 = K / 4;
  bool kMajor = op.getMatchingIndexingMap(weights).getDimPosition(0) == k;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = op.getDpsInits()[0];
  if (paddedN != N && !(init = paddedZeroInit(rewriter, loc, init, paddedN)))
    return failure();
  ArrayRef<char> raw = values.getRawData();
  std::vector<int8_t> packed(paddedN * K, 0);
  for (int64_t no = 0; no < NO; ++no)
    for (int64_t k4 = 0; k4 < K4; ++k4)
      for (int64_t ni = 0; ni < nr; ++ni)
        for (int64_t g = 0; g < 4; ++g) {
          int64_t col = no * nr + ni, kk = 4 * k4 + g;
          if (col >= N)
            continue;  // a padding column: zero weights
          int64_t from = values.isSplat() ? 0 : kMajor ? kk * N + col : col * K + kk;
          packed[((no * K4 + k4) * nr + ni) * 4 + g] = static_cast<int8_t>(raw[from]);
        }
  auto packedType = RankedTensorType::get({NO, K4, nr, 4}, rewriter.getI8Type());
  Value packedB = arith::ConstantOp::create(
      rewriter, loc, packedType,
      DenseElementsAttr::getFromRawBuffer(packedType, ArrayRef<char>(reinterpret_cast<const char *>(packed.data()),
                                                                      packed.size())));
  // A's last dimension split into [K/4][4].
  SmallVector<int64_t> lhsShape(lhsType.getShape());
  lhsShape.back() = K4;
  lhsShape.push_back(4);
  Value lhs4 = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(lhsShape, lhsType.getElementType()),
                                             lhs->get(), splitLastDim(lhsType.getRank()));

  // Loops: old loop n becomes `no`, a new loop `ni` follows it, later loops shift by one, and
  // the group loop `g` comes last.
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops() + 2, g = numLoops - 1;
  auto shifted = [&](unsigned d) { return getAffineDimExpr(d <= n ? d : d + 1, ctx); };
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> lhsExprs;
  for (unsigned j = 0; j < lhsMap.getNumResults(); ++j)
    lhsExprs.push_back(shifted(lhsMap.getDimPosition(j)));
  lhsExprs.push_back(dim(g));
  AffineMap lhs4Map = AffineMap::get(numLoops, 0, lhsExprs, ctx);
  AffineMap packedMap = AffineMap::get(numLoops, 0, {dim(n), shifted(k), dim(n + 1), dim(g)}, ctx);
  SmallVector<AffineExpr> outExprs;
  for (unsigned j = 0; j + 1 < outMap.getNumResults(); ++j)
    outExprs.push_back(shifted(outMap.getDimPosition(j)));
  outExprs.push_back(dim(n));
  outExprs.push_back(dim(n + 1));
  SmallVector<AffineMap> maps(2);
  SmallVector<Value> inputs(2);
  maps[*weightsIndex] = packedMap;
  inputs[*weightsIndex] = packedB;
  maps[1 - *weightsIndex] = lhs4Map;
  inputs[1 - *weightsIndex] = lhs4;
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + n + 1, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);

  init = packedInit(rewriter, loc, init, nr);
  auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
                                           maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), generic.getRegion(), generic.getRegion().end());
  SmallVector<int64_t> wideShape(outType.getShape());
  wideShape.back() = paddedN;
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, RankedTensorType::get(wideShape, outType.getElementType()),
                                                 generic->getResult(0), splitLastDim(outType.getRank()));
  rewriter.replaceOp(op, leadingColumns(rewriter, loc, result, N));
  return success();
}


namespace {

// `v` with its sign bits flipped (int8 x as the unsigned byte x + 128): a pad by a constant
// becomes a pad of the flipped source by the flipped constant (its kernel computes both); an
// elementwise op only this reads yields the flipped value; anything else gets an elementwise op
// of its own.
Value flipSignBits(RewriterBase &rewriter, Value v) {
  Type i8 = rewriter.getI8Type();
  auto type = cast<RankedTensorType>(v.getType());
  auto flip = [&](OpBuilder &b, Location l, Value x) -> Value {
    return arith::XOrIOp::create(b, l, x, arith::ConstantOp::create(b, l, b.getIntegerAttr(i8, -128)));
  };
  IntegerAttr padConstant;
  if (auto pad = v.getDefiningOp<tensor::PadOp>();
      pad && pad->hasOneUse() && pad.getConstantPaddingValue() &&
      matchPattern(pad.getConstantPaddingValue(), m_Constant(&padConstant))) {
    Value source = flipSignBits(rewriter, pad.getSource());
    rewriter.setInsertionPoint(pad);
    Value flipped = arith::ConstantOp::create(
        rewriter, pad.getLoc(), rewriter.getIntegerAttr(i8, static_cast<int8_t>(padConstant.getInt() ^ 0x80)));
    return tensor::PadOp::create(rewriter, pad.getLoc(), type, source, pad.getMixedLowPad(), pad.getMixedHighPad(),
                                 flipped)
        .getResult();
  }
  auto producer = v.getDefiningOp<linalg::GenericOp>();
  if (producer && v.hasOneUse() && producer->getNumResults() == 1 &&
      producer.getNumParallelLoops() == producer.getNumLoops()) {
    auto yield = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
    rewriter.setInsertionPoint(yield);
    Value flipped = flip(rewriter, yield.getLoc(), yield.getOperand(0));
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, flipped); });
    return v;
  }
  rewriter.setInsertionPointAfterValue(v);
  Location loc = v.getLoc();
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), i8);
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  return linalg::GenericOp::create(rewriter, loc, TypeRange{type}, ValueRange{v}, ValueRange{empty},
                                   ArrayRef<AffineMap>{identity, identity}, iterators,
                                   [&](OpBuilder &b, Location l, ValueRange args) {
                                     linalg::YieldOp::create(b, l, flip(b, l, args[0]));
                                   })
      ->getResult(0);
}

// The int32 initial value `init` (channels last) plus delta[f] per channel, widened to delta's
// channels (the padding ones start at their delta, zero): a zero fill or a broadcast of a
// constant per-channel value, rebuilt as a broadcast of the sum; null for anything else.
Value shiftedInit(RewriterBase &rewriter, Location loc, Value init, ArrayRef<int32_t> delta) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank(), F = type.getShape().back();
  std::vector<int32_t> values(delta.begin(), delta.end());
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() && matchPattern(fill.getInputs()[0], m_Zero())) {
    // values as they are
  } else if (linalg::GenericOp bcast = initBroadcast(init)) {
    auto cst = bcast.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto dense = cst ? dyn_cast<DenseIntElementsAttr>(cst.getValue()) : nullptr;
    AffineMap map = bcast.getMatchingIndexingMap(bcast.getDpsInputOperand(0));
    Block &body = bcast.getRegion().front();
    bool channelOnly = map.getNumResults() >= 1 && llvm::all_of(map.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      auto c = dyn_cast<AffineConstantExpr>(e);
      return (d && d.getPosition() == rank - 1) || (c && c.getValue() == 0);
    });
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (!dense || dense.getNumElements() != F || !channelOnly || body.getOperations().size() != 1 ||
        yield.getOperand(0) != body.getArgument(0) || !dense.getElementType().isInteger(32))
      return nullptr;
    int64_t f = 0;
    for (const APInt &v : dense.getValues<APInt>()) {
      values[f] = wrapToInt32(static_cast<int64_t>(values[f]) + v.getSExtValue());
      ++f;
    }
  } else {
    return nullptr;
  }
  int64_t W = static_cast<int64_t>(values.size());
  auto channelType = RankedTensorType::get({W}, rewriter.getI32Type());
  Value channels = arith::ConstantOp::create(rewriter, loc, channelType,
                                             DenseIntElementsAttr::get(channelType, ArrayRef<int32_t>(values)));
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = W;
  type = RankedTensorType::get(shape, type.getElementType());
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx),
                                 rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(rewriter, loc, TypeRange{type}, ValueRange{channels}, ValueRange{empty}, maps,
                                   iterators,
                                   [](OpBuilder &b, Location l, ValueRange args) { linalg::YieldOp::create(b, l, args[0]); })
      ->getResult(0);
}

} // namespace

LogicalResult mlir::hexir::packConvDotGroups(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel) {
  if (!op.hasPureTensorSemantics())
    return failure();
  auto cst = op.getDpsInputOperand(1)->get().getDefiningOp<arith::ConstantOp>();
  auto values = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  Value image = op.getDpsInputOperand(0)->get();
  auto imageType = cast<RankedTensorType>(image.getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!values || !values.getElementType().isInteger(8) || !imageType.getElementType().isInteger(8) ||
      !outType.getElementType().isInteger(32) || !imageType.hasStaticShape() || !outType.hasStaticShape())
    return failure();
  ArrayRef<int64_t> fshape = values.getType().getShape();  // KH, KW, C, F
  int64_t KH = fshape[0], KW = fshape[1], C = fshape[2], F = fshape[3];
  auto [nr, paddedF] = dotPanel(F, maxPanel);
  // Input channels in whole groups of four: a first layer's 3 channels read as 4, the fourth's
  // weights zero (the image gains a channel of any value).
  int64_t P = paddedF / nr, C4 = (C + 3) / 4;
  ArrayRef<char> raw = values.getRawData();
  auto weight = [&](int64_t kh, int64_t kw, int64_t c, int64_t f) -> int8_t {
    if (f >= F || c >= C)
      return 0;  // a padding channel
    return static_cast<int8_t>(raw[values.isSplat() ? 0 : ((kh * KW + kw) * C + c) * F + f]);
  };
  // The unsigned image adds 128 * sum(w) to each channel: the initial value takes it back.
  std::vector<int64_t> sums(paddedF, 0);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t f = 0; f < F; ++f)
          sums[f] += weight(kh, kw, c, f);
  std::vector<int32_t> delta(paddedF);
  for (int64_t f = 0; f < paddedF; ++f)
    delta[f] = wrapToInt32(-128 * sums[f]);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = shiftedInit(rewriter, loc, op.getDpsInits()[0], delta);
  if (!init)
    return failure();
  SmallVector<int64_t> strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1;
  std::vector<int8_t> packed(P * KH * KW * C4 * nr * 4);
  int64_t at = 0;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t c4 = 0; c4 < C4; ++c4)
          for (int64_t fi = 0; fi < nr; ++fi)
            for (int64_t g = 0; g < 4; ++g)
              packed[at++] = weight(kh, kw, 4 * c4 + g, p * nr + fi);
  SmallVector<int64_t> packedShape =
      pointwise ? SmallVector<int64_t>{P, C4, nr, 4} : SmallVector<int64_t>{P, KH, KW, C4, nr, 4};
  auto packedType = RankedTensorType::get(packedShape, rewriter.getI8Type());
  Value filter = arith::ConstantOp::create(
      rewriter, loc, packedType,
      DenseElementsAttr::getFromRawBuffer(packedType, ArrayRef<char>(reinterpret_cast<const char *>(packed.data()),
                                                                      packed.size())));
  Value flipped = flipSignBits(rewriter, image);
  rewriter.setInsertionPoint(op);
  if (C % 4 != 0) {
    // The channel padding takes the spatial padding's value, so that the two pads fold into one.
    Value value;
    if (auto pad = flipped.getDefiningOp<tensor::PadOp>())
      value = pad.getConstantPaddingValue();
    if (!value)
      value = arith::ConstantOp::create(rewriter, loc, rewriter.getIntegerAttr(rewriter.getI8Type(), 0));
    SmallVector<int64_t> shape(imageType.getShape());
    shape.back() = 4 * C4;
    SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0)), high(4, rewriter.getIndexAttr(0));
    high[3] = rewriter.getIndexAttr(4 * C4 - C);
    flipped = tensor::PadOp::create(rewriter, loc, RankedTensorType::get(shape, rewriter.getI8Type()), flipped, low,
                                    high, value);
  }
  SmallVector<int64_t> imageShape(imageType.getShape());
  imageShape.back() = C4;
  imageShape.push_back(4);
  Value image4 = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(imageShape, rewriter.getI8Type()),
                                               flipped, splitLastDim(4));
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  if (pointwise) {
    // Loops (n, oh, ow, p, fi, c4, g).
    maps = {AffineMap::get(7, 0, {d(0), d(1), d(2), d(5), d(6)}, ctx), AffineMap::get(7, 0, {d(3), d(5), d(4), d(6)}, ctx),
            AffineMap::get(7, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.append(2, utils::IteratorType::reduction);
  } else {
    // Loops (n, oh, ow, p, fi, kh, kw, c4, g).
    maps = {AffineMap::get(9, 0, {d(0), d(1) * strides[0] + d(5) * dilations[0], d(2) * strides[1] + d(6) * dilations[1],
                                  d(7), d(8)}, ctx),
            AffineMap::get(9, 0, {d(3), d(5), d(6), d(7), d(4), d(8)}, ctx),
            AffineMap::get(9, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.append(4, utils::IteratorType::reduction);
  }
  init = packedInit(rewriter, loc, init, nr);
  auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, ValueRange{image4, filter},
                                           ValueRange{init}, maps, iterators, dotBody);
  SmallVector<int64_t> wideShape(outType.getShape());
  wideShape.back() = paddedF;
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, RankedTensorType::get(wideShape, outType.getElementType()),
                                                 generic->getResult(0), splitLastDim(4));
  rewriter.replaceOp(op, leadingColumns(rewriter, loc, result, F));
  if (cst->use_empty())
    rewriter.eraseOp(cst);
  return success();
}

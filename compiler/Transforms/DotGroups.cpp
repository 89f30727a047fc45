//===- DotGroups.cpp - weights packed for int8 and bf16 dot products -----===//
#include "Transforms/DotGroups.h"
#include "Transforms/PackedLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

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

// The body of every int8 dot-group convolution: acc + zext(a) * sext(b) in int32.
void int8DotBody(OpBuilder &b, Location l, ValueRange args) {
  Type i32 = b.getI32Type();
  Value product = arith::MulIOp::create(b, l, arith::ExtUIOp::create(b, l, i32, args[0]),
                                        arith::ExtSIOp::create(b, l, i32, args[1]));
  linalg::YieldOp::create(b, l, arith::AddIOp::create(b, l, args[2], product).getResult());
}

// Whether the body is a dot product's: acc + zext(a) * sext(b) in int32 (a unsigned, b the
// weights: a VNNI vpdpbusd lane), or acc + extf(a) * extf(b) in f32 of bf16 operands. The
// operand order of the multiply and of the add may be either.
bool isDotBody(linalg::GenericOp op, unsigned weightsIndex) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 5)
    return false;
  Value acc = body.getArgument(op.getNumDpsInputs());
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<arith::AddIOp, arith::AddFOp>(add))
    return false;
  bool isFloat = isa<arith::AddFOp>(add);
  Value product = add->getOperand(0) == acc ? add->getOperand(1) : add->getOperand(1) == acc ? add->getOperand(0) : Value();
  Operation *mul = product ? product.getDefiningOp() : nullptr;
  if (!mul || (isFloat ? !isa<arith::MulFOp>(mul) : !isa<arith::MulIOp>(mul)))
    return false;
  // `v` extends argument `arg`: the weights sign-extended and the activation zero-extended
  // (int8), both by extf (bf16).
  auto isExt = [&](Value v, unsigned arg) {
    Operation *def = v.getDefiningOp();
    bool kind = isFloat                 ? isa_and_nonnull<arith::ExtFOp>(def)
                : arg == weightsIndex   ? isa_and_nonnull<arith::ExtSIOp>(def)
                                        : isa_and_nonnull<arith::ExtUIOp>(def);
    return kind && def->getOperand(0) == body.getArgument(arg);
  };
  unsigned a = 1 - weightsIndex;
  return (isExt(mul->getOperand(0), a) && isExt(mul->getOperand(1), weightsIndex)) ||
         (isExt(mul->getOperand(1), a) && isExt(mul->getOperand(0), weightsIndex));
}

// The element of `values` (row-major, `bytes` wide; a splat has one) at `index`, copied to `to`.
void copyElement(DenseElementsAttr values, int64_t index, int64_t bytes, char *to) {
  ArrayRef<char> raw = values.getRawData();
  std::memcpy(to, raw.data() + (values.isSplat() ? 0 : index) * bytes, bytes);
}

// A constant of `type` from its raw bytes.
Value rawConstant(RewriterBase &rewriter, Location loc, RankedTensorType type, ArrayRef<char> bytes) {
  return arith::ConstantOp::create(rewriter, loc, type, DenseElementsAttr::getFromRawBuffer(type, bytes));
}

} // namespace

void mlir::hexir::bf16DotBody(OpBuilder &b, Location l, ValueRange args) {
  Type f32 = b.getF32Type();
  Value product = arith::MulFOp::create(b, l, arith::ExtFOp::create(b, l, f32, args[0]),
                                        arith::ExtFOp::create(b, l, f32, args[1]));
  linalg::YieldOp::create(b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
}

std::optional<int64_t> mlir::hexir::dotGroupSize(Type t, int64_t int8Group) {
  if (t.isInteger(8) && (int8Group == 4 || int8Group == 2))
    return int8Group;
  if (t.isBF16())
    return 2;
  return std::nullopt;
}

bool mlir::hexir::isDotGroupSize(Type t, int64_t size) { return dotGroupSize(t, size) == size; }

std::optional<MatmulDotOperands> mlir::hexir::matmulDotOperands(linalg::GenericOp op) {
  auto loops = columnAndReduction(op);
  if (!loops || op.getNumDpsInputs() != 2)
    return std::nullopt;
  unsigned n = loops->first, k = loops->second;
  std::optional<unsigned> weights;
  for (unsigned i = 0; i < 2; ++i) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
    auto cst = op.getDpsInputs()[i].getDefiningOp<arith::ConstantOp>();
    if (cst && isa<DenseElementsAttr>(cst.getValue()) && map.getNumResults() == 2 && map.isProjectedPermutation() &&
        ((map.getDimPosition(0) == k && map.getDimPosition(1) == n) ||
         (map.getDimPosition(0) == n && map.getDimPosition(1) == k)))
      weights = i;
  }
  if (!weights)
    return std::nullopt;
  AffineMap lhsMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1 - *weights));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!isa<RankedTensorType>(op.getDpsInputs()[1 - *weights].getType()) || !lhsMap.isProjectedPermutation() ||
      lhsMap.getNumResults() == 0 || lhsMap.getDimPosition(lhsMap.getNumResults() - 1) != k ||
      !outMap.isProjectedPermutation() || outMap.getNumResults() == 0 ||
      outMap.getDimPosition(outMap.getNumResults() - 1) != n)
    return std::nullopt;
  return MatmulDotOperands{*weights, n, k};
}

bool mlir::hexir::bf16MatmulPackable(linalg::GenericOp op, int64_t maxPanel) {
  std::optional<MatmulDotOperands> operands = matmulDotOperands(op);
  if (!operands)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t N = ranges[operands->n];
  return ranges[operands->k] % 2 == 0 &&
         (dotPanel(N, maxPanel).second == N || canPadChannels(op.getDpsInits()[0]));
}

bool mlir::hexir::bf16ConvPackable(linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel) {
  auto image = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t F = out.getShape().back();
  return op.hasPureTensorSemantics() && image.hasStaticShape() && out.hasStaticShape() &&
         (dotPanel(F, maxPanel).second == F || canPadChannels(op.getDpsInits()[0]));
}

namespace {

// An int8 contraction of two run-time tensors (a QDQ attention's Q x K^T or P x V): B, the
// operand the dot body sign-extends, indexed by k, n and batch loops (parallel loops of the
// result) in any order; A with k innermost; the result with n innermost.
std::optional<MatmulDotOperands> runTimeInt8Operands(linalg::GenericOp op) {
  auto loops = columnAndReduction(op);
  if (!loops || op.getNumDpsInputs() != 2)
    return std::nullopt;
  unsigned n = loops->first, k = loops->second;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned w = 0; w < 2; ++w) {
    auto type = dyn_cast<RankedTensorType>(op.getDpsInputs()[w].getType());
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(w));
    AffineMap lhsMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1 - w));
    if (!type || !type.getElementType().isInteger(8) || !type.hasStaticShape() ||
        op.getDpsInputs()[w].getDefiningOp<arith::ConstantOp>() || !map.isProjectedPermutation() ||
        !map.isFunctionOfDim(n) || !map.isFunctionOfDim(k) || !isDotBody(op, w))
      continue;
    bool batchOk = true;
    for (unsigned j = 0; j < map.getNumResults(); ++j) {
      unsigned d = map.getDimPosition(j);
      if (d != n && d != k)
        batchOk &= iterators[d] == utils::IteratorType::parallel && outMap.isFunctionOfDim(d);
    }
    auto lhsType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1 - w].getType());
    if (batchOk && lhsType && lhsType.hasStaticShape() && lhsMap.isProjectedPermutation() && lhsMap.getNumResults() > 0 &&
        lhsMap.getDimPosition(lhsMap.getNumResults() - 1) == k && outMap.isProjectedPermutation() &&
        outMap.getNumResults() > 0 && outMap.getDimPosition(outMap.getNumResults() - 1) == n)
      return MatmulDotOperands{w, n, k};
  }
  return std::nullopt;
}

// B, read by `map` (k, n and batch loops), packed at run time into dot-group panels
// P[batch...][no][kg][ni][g] = B[..., G * kg + g, ..., no * nr + ni, ...] (B's batch dimensions
// in their order): B viewed with its k and n dimensions split and copied by an elementwise
// kernel in the panels' order.
Value packRunTimeDotGroups(RewriterBase &rewriter, Location loc, Value b, AffineMap map, unsigned n, unsigned k,
                           int64_t KG, int64_t G, int64_t NO, int64_t nr) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(b.getType());
  int64_t rank = type.getRank(), nb = rank - 2;
  // Copy loops (batch..., no, kg, ni, g).
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<int64_t> view, packed;
  SmallVector<ReassociationIndices> groups;
  SmallVector<AffineExpr> read;
  int64_t batch = 0;
  for (int64_t j = 0; j < rank; ++j) {
    unsigned loop = map.getDimPosition(j);
    int64_t first = static_cast<int64_t>(view.size());
    if (loop == k) {
      view.append({KG, G});
      read.append({d(nb + 1), d(nb + 3)});
      groups.push_back({first, first + 1});
    } else if (loop == n) {
      view.append({NO, nr});
      read.append({d(nb), d(nb + 2)});
      groups.push_back({first, first + 1});
    } else {
      view.push_back(type.getDimSize(j));
      packed.push_back(type.getDimSize(j));
      read.push_back(d(batch++));
      groups.push_back({first});
    }
  }
  packed.append({NO, KG, nr, G});
  Value viewed = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(view, type.getElementType()), b,
                                               groups);
  return permutedCopy(rewriter, loc, viewed, packed, AffineMap::get(nb + 4, 0, read, ctx),
                      AffineMap::getMultiDimIdentityMap(nb + 4, ctx));
}

} // namespace

LogicalResult mlir::hexir::packMatmulDotGroups(RewriterBase &rewriter, linalg::GenericOp op, int64_t maxPanel,
                                               int64_t int8Group) {
  std::optional<MatmulDotOperands> operands = matmulDotOperands(op);
  bool runTime = false;
  if (!operands && (operands = runTimeInt8Operands(op)))
    runTime = true;
  if (!operands)
    return failure();
  unsigned n = operands->n, k = operands->k, weightsIndex = operands->weights;
  OpOperand *weights = op.getDpsInputOperand(weightsIndex), *lhs = op.getDpsInputOperand(1 - weightsIndex);
  DenseElementsAttr values;
  if (!runTime)
    values = cast<DenseElementsAttr>(weights->get().getDefiningOp<arith::ConstantOp>().getValue());
  Type element = runTime ? cast<RankedTensorType>(weights->get().getType()).getElementType() : values.getElementType();
  std::optional<int64_t> G = dotGroupSize(element, int8Group);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto lhsType = cast<RankedTensorType>(lhs->get().getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type accumulator = element.isBF16() ? Type(rewriter.getF32Type()) : Type(rewriter.getI32Type());
  if (!G || lhsType.getElementType() != element || outType.getElementType() != accumulator ||
      !isDotBody(op, weightsIndex))
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t N = ranges[n], K = ranges[k];
  auto [nr, paddedN] = dotPanel(N, maxPanel);
  // A run-time B is not padded (its packing kernel would have to).
  if (K % *G != 0 || (runTime && paddedN != N))
    return failure();
  int64_t NO = paddedN / nr, KG = K / *G, bytes = element.getIntOrFloatBitWidth() / 8;
  AffineMap weightsMap = op.getMatchingIndexingMap(weights);
  bool kMajor = weightsMap.getDimPosition(0) == k;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = op.getDpsInits()[0];
  if (paddedN != N &&
      !(init = accumulator.isF32() ? padChannels(rewriter, loc, init, paddedN) : paddedZeroInit(rewriter, loc, init, paddedN)))
    return failure();
  Value packedB;
  if (runTime) {
    packedB = packRunTimeDotGroups(rewriter, loc, weights->get(), weightsMap, n, k, KG, *G, NO, nr);
  } else {
    std::vector<char> packed(paddedN * K * bytes, 0);  // padding columns: zero weights
    for (int64_t no = 0; no < NO; ++no)
      for (int64_t kg = 0; kg < KG; ++kg)
        for (int64_t ni = 0; ni < nr; ++ni)
          for (int64_t g = 0; g < *G; ++g) {
            int64_t col = no * nr + ni, kk = *G * kg + g;
            if (col < N)
              copyElement(values, kMajor ? kk * N + col : col * K + kk, bytes,
                          &packed[(((no * KG + kg) * nr + ni) * *G + g) * bytes]);
          }
    packedB = rawConstant(rewriter, loc, RankedTensorType::get({NO, KG, nr, *G}, element), packed);
  }
  // A's last dimension split into [K/G][G].
  SmallVector<int64_t> lhsShape(lhsType.getShape());
  lhsShape.back() = KG;
  lhsShape.push_back(*G);
  Value lhsGroups = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(lhsShape, lhsType.getElementType()),
                                             lhs->get(), splitLastDim(lhsType.getRank()));

  // Loops: old loop n becomes `no`, a new loop `ni` follows it, later loops shift by one, and
  // the group loop `g` comes last.
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops() + 2, g = numLoops - 1;
  auto shifted = [&](unsigned d) { return getAffineDimExpr(d <= n ? d : d + 1, ctx); };
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  AffineMap lhsMap = op.getMatchingIndexingMap(lhs);
  SmallVector<AffineExpr> lhsExprs;
  for (unsigned j = 0; j < lhsMap.getNumResults(); ++j)
    lhsExprs.push_back(shifted(lhsMap.getDimPosition(j)));
  lhsExprs.push_back(dim(g));
  AffineMap lhsGroupsMap = AffineMap::get(numLoops, 0, lhsExprs, ctx);
  SmallVector<AffineExpr> packedExprs;  // a run-time B's batch dimensions, then the panel's
  for (unsigned j = 0; j < weightsMap.getNumResults(); ++j)
    if (unsigned loop = weightsMap.getDimPosition(j); runTime && loop != n && loop != k)
      packedExprs.push_back(shifted(loop));
  packedExprs.append({dim(n), shifted(k), dim(n + 1), dim(g)});
  AffineMap packedMap = AffineMap::get(numLoops, 0, packedExprs, ctx);
  SmallVector<AffineExpr> outExprs;
  for (unsigned j = 0; j + 1 < outMap.getNumResults(); ++j)
    outExprs.push_back(shifted(outMap.getDimPosition(j)));
  outExprs.push_back(dim(n));
  outExprs.push_back(dim(n + 1));
  SmallVector<AffineMap> maps(2);
  SmallVector<Value> inputs(2);
  maps[weightsIndex] = packedMap;
  inputs[weightsIndex] = packedB;
  maps[1 - weightsIndex] = lhsGroupsMap;
  inputs[1 - weightsIndex] = lhsGroups;
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

// Whether `op` only flips the sign bits of its one int8 input (x xor -128), element for element.
bool isSignFlip(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block *body = op.getBody();
  auto xori = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0).getDefiningOp<arith::XOrIOp>();
  IntegerAttr bit;
  return xori && xori.getLhs() == body->getArgument(0) && matchPattern(xori.getRhs(), m_Constant(&bit)) &&
         bit.getInt() == -128 && llvm::all_of(body->without_terminator(), [&](Operation &inner) {
           return &inner == xori.getOperation() || isa<arith::ConstantOp>(inner);
         });
}

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
  Value flipped = linalg::GenericOp::create(rewriter, loc, TypeRange{type}, ValueRange{v}, ValueRange{empty},
                                            ArrayRef<AffineMap>{identity, identity}, iterators,
                                            [&](OpBuilder &b, Location l, ValueRange args) {
                                              linalg::YieldOp::create(b, l, flip(b, l, args[0]));
                                            })
                      ->getResult(0);
  // Other readers' flips of `v` (a pooled tensor read by two convolutions, a matmul's flip from
  // the importer) read this one instead, which comes right after `v` and so before all of
  // them: `v` keeps one reader, and the flip can join its producer's kernel.
  for (Operation *user : llvm::make_early_inc_range(v.getUsers()))
    if (auto other = dyn_cast<linalg::GenericOp>(user);
        other && other->getResult(0) != flipped && isSignFlip(other) && other.getDpsInputs()[0] == v &&
        other->getResult(0).getType() == type)
      rewriter.replaceOp(other, flipped);
  return flipped;
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

LogicalResult mlir::hexir::packConvDotGroups(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel,
                                             int64_t int8Group) {
  if (!op.hasPureTensorSemantics())
    return failure();
  auto cst = op.getDpsInputOperand(1)->get().getDefiningOp<arith::ConstantOp>();
  auto values = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  Value image = op.getDpsInputOperand(0)->get();
  auto imageType = cast<RankedTensorType>(image.getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = values ? values.getElementType() : Type();
  std::optional<int64_t> G = element ? dotGroupSize(element, int8Group) : std::nullopt;
  bool isInt8 = G && element.isInteger(8);
  if (!G || imageType.getElementType() != element ||
      outType.getElementType() != (isInt8 ? Type(rewriter.getI32Type()) : Type(rewriter.getF32Type())) ||
      !imageType.hasStaticShape() || !outType.hasStaticShape())
    return failure();
  ArrayRef<int64_t> fshape = values.getType().getShape();  // KH, KW, C, F
  int64_t KH = fshape[0], KW = fshape[1], C = fshape[2], F = fshape[3];
  auto [nr, paddedF] = dotPanel(F, maxPanel);
  // Input channels in whole groups: a first layer's 3 channels read as 4, the fourth's weights
  // zero (the image gains a channel of any value).
  int64_t P = paddedF / nr, CG = (C + *G - 1) / *G, bytes = element.getIntOrFloatBitWidth() / 8;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init;
  if (isInt8) {
    // The unsigned image adds 128 * sum(w) to each channel: the initial value takes it back.
    ArrayRef<char> raw = values.getRawData();
    std::vector<int64_t> sums(paddedF, 0);
    for (int64_t t = 0; t < KH * KW * C; ++t)
      for (int64_t f = 0; f < F; ++f)
        sums[f] += static_cast<int8_t>(raw[values.isSplat() ? 0 : t * F + f]);
    std::vector<int32_t> delta(paddedF);
    for (int64_t f = 0; f < paddedF; ++f)
      delta[f] = wrapToInt32(-128 * sums[f]);
    init = shiftedInit(rewriter, loc, op.getDpsInits()[0], delta);
  } else {
    init = paddedF == F ? op.getDpsInits()[0] : padChannels(rewriter, loc, op.getDpsInits()[0], paddedF);
  }
  if (!init)
    return failure();
  SmallVector<int64_t> strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1;
  std::vector<char> packed(P * KH * KW * CG * nr * *G * bytes, 0);  // padding channels: zero weights
  char *at = packed.data();
  for (int64_t p = 0; p < P; ++p)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t cg = 0; cg < CG; ++cg)
          for (int64_t fi = 0; fi < nr; ++fi)
            for (int64_t g = 0; g < *G; ++g, at += bytes) {
              int64_t c = *G * cg + g, f = p * nr + fi;
              if (c < C && f < F)
                copyElement(values, ((kh * KW + kw) * C + c) * F + f, bytes, at);
            }
  SmallVector<int64_t> packedShape =
      pointwise ? SmallVector<int64_t>{P, CG, nr, *G} : SmallVector<int64_t>{P, KH, KW, CG, nr, *G};
  Value filter = rawConstant(rewriter, loc, RankedTensorType::get(packedShape, element), packed);
  Value grouped = isInt8 ? flipSignBits(rewriter, image) : image;
  rewriter.setInsertionPoint(op);
  if (C % *G != 0) {
    // The channel padding takes the spatial padding's value, so that the two pads fold into one.
    Value value;
    if (auto pad = grouped.getDefiningOp<tensor::PadOp>())
      value = pad.getConstantPaddingValue();
    if (!value)
      value = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    SmallVector<int64_t> shape(imageType.getShape());
    shape.back() = *G * CG;
    SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0)), high(4, rewriter.getIndexAttr(0));
    high[3] = rewriter.getIndexAttr(*G * CG - C);
    grouped = tensor::PadOp::create(rewriter, loc, RankedTensorType::get(shape, element), grouped, low, high, value);
  }
  SmallVector<int64_t> imageShape(imageType.getShape());
  imageShape.back() = CG;
  imageShape.push_back(*G);
  Value imageGroups = tensor::ExpandShapeOp::create(rewriter, loc, RankedTensorType::get(imageShape, element), grouped,
                                                    splitLastDim(4));
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  if (pointwise) {
    // Loops (n, oh, ow, p, fi, cg, g).
    maps = {AffineMap::get(7, 0, {d(0), d(1), d(2), d(5), d(6)}, ctx), AffineMap::get(7, 0, {d(3), d(5), d(4), d(6)}, ctx),
            AffineMap::get(7, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.append(2, utils::IteratorType::reduction);
  } else {
    // Loops (n, oh, ow, p, fi, kh, kw, cg, g).
    maps = {AffineMap::get(9, 0, {d(0), d(1) * strides[0] + d(5) * dilations[0], d(2) * strides[1] + d(6) * dilations[1],
                                  d(7), d(8)}, ctx),
            AffineMap::get(9, 0, {d(3), d(5), d(6), d(7), d(4), d(8)}, ctx),
            AffineMap::get(9, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.append(4, utils::IteratorType::reduction);
  }
  init = packedInit(rewriter, loc, init, nr);
  auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, ValueRange{imageGroups, filter},
                                           ValueRange{init}, maps, iterators, isInt8 ? int8DotBody : bf16DotBody);
  SmallVector<int64_t> wideShape(outType.getShape());
  wideShape.back() = paddedF;
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, RankedTensorType::get(wideShape, outType.getElementType()),
                                                 generic->getResult(0), splitLastDim(4));
  rewriter.replaceOp(op, leadingColumns(rewriter, loc, result, F));
  if (cst->use_empty())
    rewriter.eraseOp(cst);
  return success();
}

//===- PackedLayout.cpp - panels of a packed output dimension -------------===//
#include "Transforms/PackedLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;

int64_t mlir::hexir::panelWidth(int64_t n, int64_t widest) {
  for (int64_t w : {32, 16, 8})
    if (w <= widest && n % w == 0)
      return w;
  return 0;
}

std::optional<std::pair<unsigned, unsigned>> mlir::hexir::columnAndReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op) || op.getNumDpsInits() != 1)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  return std::make_pair(dims->n[0], dims->k[0]);
}

Value mlir::hexir::permutedCopy(RewriterBase &rewriter, Location loc, Value in, ArrayRef<int64_t> shape,
                                AffineMap read, AffineMap write) {
  auto elementType = cast<ShapedType>(in.getType()).getElementType();
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, elementType);
  SmallVector<utils::IteratorType> iterators(read.getNumDims(), utils::IteratorType::parallel);
  return linalg::GenericOp::create(rewriter, loc, TypeRange{empty.getType()}, ValueRange{in}, ValueRange{empty},
                                   ArrayRef<AffineMap>{read, write}, iterators,
                                   [](OpBuilder &b, Location l, ValueRange args) {
                                     linalg::YieldOp::create(b, l, args[0]);
                                   })
      ->getResult(0);
}

std::vector<float> mlir::hexir::denseFloats(DenseElementsAttr values) {
  std::vector<float> out(values.getNumElements());
  if (values.isSplat()) {
    std::fill(out.begin(), out.end(), values.getSplatValue<float>());
    return out;
  }
  // Raw storage: one float per element, in row-major order (much faster than iterating
  // getValues<float>() over tens of megabytes of weights).
  ArrayRef<char> raw = values.getRawData();
  std::memcpy(out.data(), raw.data(), out.size() * sizeof(float));
  return out;
}

SmallVector<ReassociationIndices> mlir::hexir::splitLastDim(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i + 1 < rank; ++i)
    groups.push_back({i});
  groups.push_back({rank - 1, rank});
  return groups;
}

// `v` with its dimension `dim` split into [n / nr][nr].
static Value expandDim(OpBuilder &b, Location loc, Value v, int64_t dim, int64_t nr) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= nr;
  shape.insert(shape.begin() + dim + 1, nr);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, next = 0; i < type.getRank(); ++i) {
    groups.push_back({next++});
    if (i == dim)
      groups.back().push_back(next++);
  }
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
}

linalg::GenericOp mlir::hexir::initBroadcast(Value init) {
  auto bcast = init.getDefiningOp<linalg::GenericOp>();
  if (bcast && bcast.getNumDpsInputs() == 1 && bcast.getNumDpsInits() == 1 &&
      bcast.getNumParallelLoops() == bcast.getNumLoops() && bcast.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
      bcast.getMatchingIndexingMap(bcast.getDpsInitOperand(0)).isIdentity())
    return bcast;
  return nullptr;
}

Value mlir::hexir::packedInit(OpBuilder &b, Location loc, Value init, int64_t nr) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= nr;
  shape.push_back(nr);
  if (auto fill = init.getDefiningOp<linalg::FillOp>(); fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    return linalg::FillOp::create(b, fill.getLoc(), fill.getInputs()[0], empty)->getResult(0);
  }
  if (linalg::GenericOp bcast = initBroadcast(init)) {
    // Loops o_0 .. o_{r-1} become o_0 .. o_{r-2}, o_no, o_ni. The input follows: its dimension
    // read by o_{r-1} (if any: a bias [F] or [F, 1, 1]) splits in two as well.
    int64_t r = type.getRank();
    AffineMap map = bcast.getMatchingIndexingMap(bcast.getDpsInputOperand(0));
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> exprs;
    std::optional<unsigned> split;
    for (unsigned j = 0; j < map.getNumResults(); ++j) {
      AffineExpr e = map.getResult(j);
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d && !isa<AffineConstantExpr>(e))
        return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), init,
                                             splitLastDim(r));
      if (d && d.getPosition() == r - 1) {
        exprs.push_back(getAffineDimExpr(r - 1, ctx));
        exprs.push_back(getAffineDimExpr(r, ctx));
        split = j;
      } else {
        exprs.push_back(e);
      }
    }
    Value input = bcast.getDpsInputs()[0];
    if (split)
      input = expandDim(b, loc, input, *split, nr);
    SmallVector<AffineMap> maps = {AffineMap::get(r + 1, 0, exprs, ctx), AffineMap::getMultiDimIdentityMap(r + 1, ctx)};
    Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    SmallVector<utils::IteratorType> iterators(r + 1, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(b, bcast.getLoc(), TypeRange{empty.getType()}, ValueRange{input},
                                             ValueRange{empty}, maps, iterators);
    b.cloneRegionBefore(bcast.getRegion(), generic.getRegion(), generic.getRegion().end());
    return generic->getResult(0);
  }
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), init,
                                       splitLastDim(type.getRank()));
}

namespace {
// An accumulator's zero fill (f32) into tensor.empty.
linalg::FillOp zeroFloatFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() &&
                 matchPattern(fill.getInputs()[0], m_AnyZeroFloat())
             ? fill
             : nullptr;
}

// A broadcast of a constant f32 bias of F values (any unit dimensions around it) along the
// accumulator's last dimension, yielded as is: the op, the values and the bias's dimension.
struct ChannelBias {
  linalg::GenericOp bcast;
  DenseElementsAttr values;
  unsigned channel;
};
std::optional<ChannelBias> channelBias(Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  linalg::GenericOp bcast = mlir::hexir::initBroadcast(init);
  if (!bcast)
    return std::nullopt;
  Block &body = bcast.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto cst = bcast.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto values = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  AffineMap map = bcast.getMatchingIndexingMap(bcast.getDpsInputOperand(0));
  std::optional<unsigned> channel;
  for (unsigned j = 0; j < map.getNumResults(); ++j)
    if (auto d = dyn_cast<AffineDimExpr>(map.getResult(j)); d && d.getPosition() == type.getRank() - 1)
      channel = j;
  if (!values || !values.getElementType().isF32() || body.getOperations().size() != 1 ||
      yield.getOperand(0) != body.getArgument(0) || !channel || values.getNumElements() != type.getShape().back())
    return std::nullopt;
  return ChannelBias{bcast, values, *channel};
}
} // namespace

bool mlir::hexir::canPadChannels(Value init) { return zeroFloatFill(init) || channelBias(init); }

Value mlir::hexir::padChannels(RewriterBase &rewriter, Location loc, Value init, int64_t paddedF) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = paddedF;
  if (linalg::FillOp fill = zeroFloatFill(init)) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    return linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs()[0], empty)->getResult(0);
  }
  std::optional<ChannelBias> bias = channelBias(init);
  if (!bias)
    return nullptr;
  std::vector<float> values = denseFloats(bias->values);
  values.resize(paddedF, 0.0f);
  SmallVector<int64_t> biasShape(bias->values.getType().getShape());
  biasShape[bias->channel] = paddedF;
  auto biasType = RankedTensorType::get(biasShape, rewriter.getF32Type());
  Value wideBias =
      arith::ConstantOp::create(rewriter, loc, biasType, DenseElementsAttr::get(biasType, ArrayRef<float>(values)));
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  linalg::GenericOp bcast = bias->bcast;
  auto wide = linalg::GenericOp::create(rewriter, bcast.getLoc(), TypeRange{empty.getType()}, ValueRange{wideBias},
                                        ValueRange{empty}, bcast.getIndexingMapsArray(),
                                        bcast.getIteratorTypesArray());
  rewriter.cloneRegionBefore(bcast.getRegion(), wide.getRegion(), wide.getRegion().end());
  return wide->getResult(0);
}

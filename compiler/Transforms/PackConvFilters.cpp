//===- PackConvFilters.cpp - filters in the layout the conv kernel reads --===//
//
// A channels-last convolution's register tile (a few output columns x nr output channels)
// reads, at every tap (kh, kw, c), nr consecutive floats of its HWCF filter: a row of F floats
// of which it uses nr. For deep layers (3x3x512x512: 9.4 MB) the rows one tile walks through
// are F floats apart, spread over more than a megabyte, and are streamed from memory for
// every layer: every load misses a page the prefetchers did not fetch. Constant filters are
// therefore stored packed, one contiguous panel per nr output channels:
//
//   P[p][kh][kw][c][fi] = W[kh][kw][c][p * nr + fi]
//
// and the convolution becomes a linalg.generic over (n, oh, ow, p, fi, kh, kw, c) writing its
// result viewed as [N, OH, OW, F / nr, nr] (an expand_shape of the contiguous NHWC result):
//
//   O[n, oh, ow, p, fi] += I[n, oh * sh + kh * dh, ow * sw + kw * dw, c] * P[p, kh, kw, c, fi]
//
// The kernel generator (TileAndVectorize) tiles it to one panel per register tile and then
// treats each tile as the named convolution it is. A 1x1 convolution with stride 1 becomes a
// plain contraction over (n, oh, ow, p, fi, c), so it runs as a packed matmul. A zero fill or
// bias broadcast initializing the accumulator is rebuilt in the packed shape, so it still
// fuses into the kernel. Output channel counts that 8 does not divide, and those of one panel
// (already contiguous), stay unpacked; at least 128 channels that only 8 divides (a 1000-class
// classifier) get 32- or 16-wide panels padded with zero channels. On a target with int8 dot
// products (VNNI groups of four, vpmaddwd pairs), int8 filters are packed in dot-product groups
// instead (DotGroups.h).
//
//===----------------------------------------------------------------------===//
#include "Transforms/DotGroups.h"
#include "Transforms/PackedLayout.h"
#include "Dialect/Functions.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

namespace mlir::hexir {
#define GEN_PASS_DEF_PACKCONVFILTERS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

LogicalResult pack(RewriterBase &rewriter, linalg::Conv2DNhwcHwcfOp op, int64_t maxPanel) {
  if (!op.hasPureTensorSemantics())
    return failure();
  auto cst = op.getDpsInputOperand(1)->get().getDefiningOp<arith::ConstantOp>();
  auto values = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  auto imageType = cast<RankedTensorType>(op.getDpsInputOperand(0)->get().getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!values || !values.getElementType().isF32() || !imageType.getElementType().isF32() ||
      !outType.getElementType().isF32() || !imageType.hasStaticShape() || !outType.hasStaticShape())
    return failure();
  ArrayRef<int64_t> fshape = values.getType().getShape(); // KH, KW, C, F
  int64_t KH = fshape[0], KW = fshape[1], C = fshape[2], F = fshape[3];
  // One panel (F = nr) is the HWCF layout already: left as a named convolution. Wide layers
  // whose F only 8 divides (a 1000-class classifier) get wider panels, the last one padded
  // with zero channels, when their initial value can be padded too (8-wide panels fill half
  // an AVX-512 register): 32-wide where that adds at most 1/32 more work (1000 -> 1024), else
  // 16-wide (at most 6% more), never wider than the target's two vectors. With AVX-512,
  // 16-wide panels take register tiles of 28 rows of one vector:
  // a broadcast load per FMA, and rows of 512 input channels, 2 KiB apart, in only two L1
  // sets. squeezenet's classifier ran 1.3x faster over 1024 channels in 32-wide panels (GEMM
  // 169x1008x512: 68-75 GFLOP/s, 169x1024x512: 111).
  int64_t nr = panelWidth(F, maxPanel), paddedF = F;
  Value init = op.getDpsInits()[0];
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  if (nr == 8 && F >= 128 && maxPanel >= 16) {
    int64_t wide32 = (F + 31) / 32 * 32;
    int64_t width = maxPanel >= 32 && (wide32 - F) * 32 <= F ? 32 : 16, padded = width == 32 ? wide32 : F + 8;
    if (Value wide = padChannels(rewriter, loc, init, padded)) {
      nr = width;
      paddedF = padded;
      init = wide;
    }
  }
  if (!nr || nr == paddedF)
    return failure();
  SmallVector<int64_t> strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  // A 1x1 convolution with stride 1 reads the image as a matrix: a contraction.
  bool pointwise = KH == 1 && KW == 1 && strides[0] == 1 && strides[1] == 1;

  int64_t P = paddedF / nr, taps = KH * KW * C;
  std::vector<float> raw = denseFloats(values), packed(P * taps * nr, 0.0f);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t t = 0; t < taps; ++t)
      std::memcpy(&packed[(p * taps + t) * nr], &raw[t * F + p * nr], std::min(nr, F - p * nr) * sizeof(float));
  SmallVector<int64_t> packedShape = pointwise ? SmallVector<int64_t>{P, C, nr} : SmallVector<int64_t>{P, KH, KW, C, nr};
  auto packedType = RankedTensorType::get(packedShape, rewriter.getF32Type());
  Value filter = arith::ConstantOp::create(rewriter, loc, packedType,
                                           DenseElementsAttr::get(packedType, ArrayRef<float>(packed)));

  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  if (pointwise) {
    // Loops (n, oh, ow, p, fi, c).
    maps = {AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx), AffineMap::get(6, 0, {d(3), d(5), d(4)}, ctx),
            AffineMap::get(6, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.push_back(utils::IteratorType::reduction);
  } else {
    // Loops (n, oh, ow, p, fi, kh, kw, c).
    maps = {AffineMap::get(8, 0, {d(0), d(1) * strides[0] + d(5) * dilations[0], d(2) * strides[1] + d(6) * dilations[1], d(7)}, ctx),
            AffineMap::get(8, 0, {d(3), d(5), d(6), d(7), d(4)}, ctx),
            AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    iterators.append(3, utils::IteratorType::reduction);
  }
  init = packedInit(rewriter, loc, init, nr);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{op.getDpsInputOperand(0)->get(), filter}, ValueRange{init},
      maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(b, l, args[0], args[1]);
        linalg::YieldOp::create(b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
      });
  SmallVector<int64_t> wideShape(outType.getShape());
  wideShape.back() = paddedF;
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, RankedTensorType::get(wideShape, rewriter.getF32Type()),
                                                 generic->getResult(0), splitLastDim(4));
  if (paddedF != F) {
    // The real channels (a copy kernel: small next to the convolution).
    SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0)), ones(4, rewriter.getIndexAttr(1)), sizes;
    for (int64_t d : outType.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    result = tensor::ExtractSliceOp::create(rewriter, loc, result, zeros, sizes, ones);
  }
  rewriter.replaceOp(op, result);
  if (cst->use_empty())
    rewriter.eraseOp(cst);
  return success();
}

struct PackConvFiltersPass : public mlir::hexir::impl::PackConvFiltersBase<PackConvFiltersPass> {
  using PackConvFiltersBase::PackConvFiltersBase;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      SmallVector<linalg::Conv2DNhwcHwcfOp> ops;
      fn.walk([&](linalg::Conv2DNhwcHwcfOp op) { ops.push_back(op); });
      for (linalg::Conv2DNhwcHwcfOp op : ops)
        if (!dotGroups || failed(packConvDotGroups(rewriter, op, maxPanel, int8Group)))
          (void)pack(rewriter, op, maxPanel);
    }
  }
};

} // namespace

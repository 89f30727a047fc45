//===- RegionOps.cpp - ONNX RoiAlign --------------------------------------===//
//
// RoiAlign pools each region of interest (a box in image coordinates, scaled by spatial_scale)
// into an output_height x output_width grid of bins, each the average (or max) of bilinear
// samples on a regular sampling grid inside the bin. One linalg.generic over (roi, channel, bin
// row, bin column) with the samples as reduction loops; the boxes and batch indices are read at
// run time. Samples are computed as ONNX Runtime and torchvision compute them: a sample more
// than one pixel outside the image is 0, others are clamped into it.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Samples per bin along an axis when sampling_ratio is 0 (adaptive: ceil(roi size / bins)),
// for constant boxes: the largest over the boxes; the reduction masks what a box does not use.
constexpr int64_t kMaxAdaptiveSamples = 64;

LogicalResult convertRoiAlign(NodeContext &ctx) {
  const OnnxValue &x = ctx.input(0), &rois = ctx.input(1), &batchIndices = ctx.input(2);
  if (!isFloat(x.type) || x.rank() != 4)
    return ctx.error() << "X must be a float tensor [N, C, H, W]";
  if (!isFloat(rois.type) || rois.rank() != 2 || rois.shape[1] != 4)
    return ctx.error() << "rois must be a float tensor [num_rois, 4]";
  if ((batchIndices.type != DType::kInt64 && batchIndices.type != DType::kInt32) || batchIndices.rank() != 1 ||
      batchIndices.shape[0] != rois.shape[0])
    return ctx.error() << "batch_indices must be an integer vector of " << rois.shape[0] << " values (one per roi)";
  std::string mode = ctx.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.error() << "mode '" << mode << "' must be avg or max";
  // Opsets 10-15 shift nothing and make every box at least 1x1 ("output_half_pixel"); 16 added
  // the attribute, with half_pixel as its default.
  std::string transform = ctx.attrString("coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return ctx.error() << "coordinate_transformation_mode '" << transform << "' must be half_pixel or output_half_pixel";
  bool halfPixel = transform == "half_pixel", isMax = mode == "max";
  int64_t outH = ctx.attrInt("output_height", 1), outW = ctx.attrInt("output_width", 1);
  int64_t ratio = ctx.attrInt("sampling_ratio", 0);
  float scale = ctx.attrFloat("spatial_scale", 1.0f);
  if (outH < 1 || outW < 1 || outH > (1 << 16) || outW > (1 << 16) || ratio < 0 || ratio > kMaxAdaptiveSamples)
    return ctx.error() << "output_height and output_width must be in [1, 65536] and sampling_ratio in [0, "
                       << kMaxAdaptiveSamples << "]";
  int64_t numRois = rois.shape[0], channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  // The sampling grid: sampling_ratio, or (adaptive) as large as the largest box needs.
  int64_t gridH = ratio, gridW = ratio;
  if (ratio == 0) {
    if (!rois.constant)
      return ctx.error() << "sampling_ratio 0 (as many samples as each box needs) with run-time rois: the samples "
                            "per bin follow the boxes' sizes; give sampling_ratio > 0, or fix rois with --fix-input";
    gridH = gridW = 1;
    for (int64_t r = 0; r < numRois; ++r) {
      double h = (rois.constant->asDouble(r * 4 + 3) - rois.constant->asDouble(r * 4 + 1)) * scale;
      double w = (rois.constant->asDouble(r * 4 + 2) - rois.constant->asDouble(r * 4 + 0)) * scale;
      if (!halfPixel) {
        h = std::max(h, 1.0);
        w = std::max(w, 1.0);
      }
      double needH = std::ceil(h / static_cast<double>(outH)), needW = std::ceil(w / static_cast<double>(outW));
      if (!(needH <= kMaxAdaptiveSamples) || !(needW <= kMaxAdaptiveSamples))
        return ctx.error() << "roi " << r << " needs " << needH << "x" << needW << " samples per bin, more than "
                           << kMaxAdaptiveSamples << "x" << kMaxAdaptiveSamples << "; give sampling_ratio";
      // A box of negative size (its end before its start) needs no more than one sample, as in
      // ONNX Runtime; converting its negative count would be undefined.
      gridH = std::max<int64_t>(gridH, static_cast<int64_t>(std::max(needH, 1.0)));
      gridW = std::max<int64_t>(gridW, static_cast<int64_t>(std::max(needW, 1.0)));
    }
  }
  OpBuilder &b = ctx.b;
  MLIRContext *mc = b.getContext();
  Value xv = materialize(ctx, x), rv = materialize(ctx, rois), bv = materialize(ctx, batchIndices);
  std::vector<int64_t> outShape = {numRois, channels, outH, outW};
  Value empty = tensor::EmptyOp::create(b, ctx.loc, outShape, b.getF32Type());
  Value init = linalg::FillOp::create(b, ctx.loc,
                                      ValueRange{floatConst(b, ctx.loc, isMax ? -std::numeric_limits<float>::infinity() : 0.0)},
                                      ValueRange{empty})
                   .getResult(0);
  Value samples = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{gridH, gridW}, b.getI8Type());
  auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
  // Loops (roi, channel, bin row, bin column | sample row, sample column).
  SmallVector<AffineMap> maps = {AffineMap::get(6, 0, {d(4), d(5)}, mc), AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, mc)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, ValueRange{samples}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        auto idx = [&](unsigned i) { return linalg::IndexOp::create(nb, nl, i).getResult(); };
        auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, nl, v).getResult(); };
        auto f = [&](double v) { return floatConst(nb, nl, v); };
        auto toF = [&](Value i) {
          return arith::SIToFPOp::create(nb, nl, nb.getF32Type(), arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i));
        };
        Value r = idx(0);
        auto corner = [&](int64_t k) {
          Value v = tensor::ExtractOp::create(nb, nl, rv, ValueRange{r, cst(k)});
          v = arith::MulFOp::create(nb, nl, v, f(scale));
          return halfPixel ? arith::SubFOp::create(nb, nl, v, f(0.5)).getResult() : v;
        };
        Value x1 = corner(0), y1 = corner(1), x2 = corner(2), y2 = corner(3);
        Value roiW = arith::SubFOp::create(nb, nl, x2, x1), roiH = arith::SubFOp::create(nb, nl, y2, y1);
        if (!halfPixel) {
          roiW = arith::MaxNumFOp::create(nb, nl, roiW, f(1.0));
          roiH = arith::MaxNumFOp::create(nb, nl, roiH, f(1.0));
        }
        Value binH = arith::DivFOp::create(nb, nl, roiH, f(static_cast<double>(outH)));
        Value binW = arith::DivFOp::create(nb, nl, roiW, f(static_cast<double>(outW)));
        // This box's samples per bin: sampling_ratio, or (adaptive) the ceil of the bin size,
        // none for an empty box (its bins are 0, as ONNX Runtime's).
        Value usedH = f(static_cast<double>(gridH)), usedW = f(static_cast<double>(gridW));
        Value used = arith::ConstantIntOp::create(nb, nl, 1, 1);
        if (ratio == 0) {
          usedH = math::CeilOp::create(nb, nl, binH);
          usedW = math::CeilOp::create(nb, nl, binW);
          used = arith::AndIOp::create(nb, nl, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, toF(idx(4)), usedH),
                                       arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, toF(idx(5)), usedW));
        }
        // The sample's position: start + bin * size + (sample + 0.5) * size / samples.
        auto position = [&](Value start, Value bin, unsigned binDim, unsigned sampleDim, Value count) {
          Value offset = arith::MulFOp::create(nb, nl, toF(idx(binDim)), bin);
          Value within = arith::DivFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, arith::AddFOp::create(nb, nl, toF(idx(sampleDim)), f(0.5)), bin), count);
          return arith::AddFOp::create(nb, nl, start, arith::AddFOp::create(nb, nl, offset, within)).getResult();
        };
        Value y = position(y1, binH, 2, 4, usedH), xs = position(x1, binW, 3, 5, usedW);
        // More than a pixel outside (or NaN): the sample is 0.
        auto within = [&](Value v, int64_t size) {
          return arith::AndIOp::create(nb, nl, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, v, f(-1.0)),
                                       arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, v, f(static_cast<double>(size))))
              .getResult();
        };
        Value inside = arith::AndIOp::create(nb, nl, within(y, height), within(xs, width));
        // Clamped into [0, size - 1] (NaN to 0): the low tap, the high tap (at most size - 1) and
        // the weight of the high one.
        auto taps = [&](Value v, int64_t size) {
          Value c = arith::MinNumFOp::create(nb, nl, arith::MaxNumFOp::create(nb, nl, v, f(0.0)), f(static_cast<double>(size - 1)));
          Value lowF = math::FloorOp::create(nb, nl, c);
          Value low = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                 arith::FPToSIOp::create(nb, nl, nb.getI64Type(), lowF));
          Value high = arith::MinSIOp::create(nb, nl, arith::AddIOp::create(nb, nl, low, cst(1)), cst(size - 1));
          return std::make_tuple(low, high, arith::SubFOp::create(nb, nl, c, lowF).getResult());
        };
        auto [yLow, yHigh, ly] = taps(y, height);
        auto [xLow, xHigh, lx] = taps(xs, width);
        Value hy = arith::SubFOp::create(nb, nl, f(1.0), ly), hx = arith::SubFOp::create(nb, nl, f(1.0), lx);
        // The box's image (an index outside [0, N) reads image 0 rather than outside X).
        Value n = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), tensor::ExtractOp::create(nb, nl, bv, ValueRange{r}));
        Value nOk = arith::AndIOp::create(nb, nl, arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, n, cst(0)),
                                          arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, n, cst(x.shape[0])));
        n = arith::SelectOp::create(nb, nl, nOk, n, cst(0));
        Value c = idx(1);
        auto term = [&](Value yy, Value xx, Value wy, Value wx) {
          Value v = tensor::ExtractOp::create(nb, nl, xv, ValueRange{n, c, yy, xx});
          return arith::MulFOp::create(nb, nl, arith::MulFOp::create(nb, nl, wy, wx), v).getResult();
        };
        Value t1 = term(yLow, xLow, hy, hx), t2 = term(yLow, xHigh, hy, lx), t3 = term(yHigh, xLow, ly, hx),
              t4 = term(yHigh, xHigh, ly, lx);
        Value value;
        if (isMax) {
          // ONNX Runtime's max mode: the largest weighted tap of each sample, then of the samples.
          value = arith::MaximumFOp::create(nb, nl, arith::MaximumFOp::create(nb, nl, t1, t2),
                                            arith::MaximumFOp::create(nb, nl, t3, t4));
          value = arith::SelectOp::create(nb, nl, inside, value, f(0.0));
          value = arith::MaximumFOp::create(nb, nl, a[1], value);
        } else {
          value = arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, t1, t2), arith::AddFOp::create(nb, nl, t3, t4));
          value = arith::SelectOp::create(nb, nl, inside, value, f(0.0));
          value = arith::DivFOp::create(nb, nl, value, arith::MulFOp::create(nb, nl, usedH, usedW));
          // (Not used, so never a division by zero that counts.)
          value = arith::AddFOp::create(nb, nl, a[1], value);
        }
        linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, used, value, a[1])});
      });
  OnnxValue pooled = OnnxValue::ofValue(generic.getResult(0), DType::kFloat);
  if (isMax && ratio == 0) {
    // A box without samples kept the max's start, -inf: its bins are 0.
    auto fixed = elementwise(ctx, {&pooled}, DType::kFloat, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0],
                                          floatConst(nb, nl, -std::numeric_limits<float>::infinity()));
      return arith::SelectOp::create(nb, nl, empty, floatConst(nb, nl, 0.0), a[0]);
    });
    if (failed(fixed))
      return failure();
    pooled = *fixed;
  }
  ctx.setOutput(0, pooled);
  return success();
}

} // namespace

void addRegionOps(std::vector<OpSupport> &ops) {
  ops.insert(ops.end(), {
      {"RoiAlign", 13, 21, convertRoiAlign,
       "sampling_ratio 0 (adaptive) needs rois known at compile time and at most 64 samples per bin axis",
       "coordinate_transformation_mode mode output_height output_width sampling_ratio spatial_scale", 3},
  });
}

} // namespace hexir::onnx_import

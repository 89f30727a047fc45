//===- WarpMma.cpp - hexir.warp_mma as tensor cores or as its dot products -===//
#include "Target/Cuda/WarpMma.h"

#include "Target/Cuda/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_LOWERWARPMMA
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// The element region `region` (of a warp_mma) yields at (row, col), cloned at the builder.
Value elementAt(OpBuilder &b, Region &region, Value row, Value col) {
  Block &block = region.front();
  IRMapping map;
  map.map(block.getArgument(0), row);
  map.map(block.getArgument(1), col);
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  return map.lookupOrDefault(cast<YieldOp>(block.getTerminator()).getValue());
}

Value index(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

// The lane's group (lane / 4: its rows of A and C, its column of B) and its thread in the
// group (lane % 4: its columns of A and C, its rows of B), as the PTX ISA names them.
std::pair<Value, Value> groupAndThread(OpBuilder &b, Location loc, Value lane) {
  return {arith::DivUIOp::create(b, loc, lane, index(b, loc, 4)),
          arith::RemUIOp::create(b, loc, lane, index(b, loc, 4))};
}

// x rounded to TF32 (10 mantissa bits) to nearest, ties away from zero, as cvt.rna.tf32.f32
// does: half of the last kept bit added to the magnitude's bits, the 13 bits below it
// cleared. A NaN stays what it is.
Value roundToTf32(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value half = arith::ConstantIntOp::create(b, loc, i32, 0x1000);
  Value mask = arith::ConstantIntOp::create(b, loc, i32, static_cast<int64_t>(0xFFFFE000u));
  Value rounded = arith::AndIOp::create(b, loc, arith::AddIOp::create(b, loc, bits, half), mask);
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc, nan, x, arith::BitcastOp::create(b, loc, b.getF32Type(), rounded));
}

struct LowerWarpMmaPass : public mlir::hexir::impl::LowerWarpMmaBase<LowerWarpMmaPass> {
  void runOnOperation() override {
    SmallVector<WarpMmaOp> ops;
    getOperation()->walk([&](WarpMmaOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (WarpMmaOp op : ops)
      lowerWarpMmaToTensorCores(rewriter, op);
  }
};

} // namespace

void mlir::hexir::lowerWarpMmaToTensorCores(RewriterBase &rewriter, WarpMmaOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto [group, thread] = groupAndThread(rewriter, loc, op.getLane());
  Value eight = index(rewriter, loc, 8), four = index(rewriter, loc, 4);
  Value groupBelow = arith::AddIOp::create(rewriter, loc, group, eight);
  Value threadRight = arith::AddIOp::create(rewriter, loc, thread, four);
  auto tf32 = [&](Value x) -> Value {
    Value converted = NVVM::ConvertFloatToTF32Op::create(rewriter, loc, rewriter.getI32Type(), x,
                                                         NVVM::FPRoundingMode::RNA, NVVM::SaturationMode::NONE,
                                                         /*relu=*/false);
    return arith::BitcastOp::create(rewriter, loc, rewriter.getF32Type(), converted);
  };
  // A: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); B: b0 (t, g), b1 (t + 4, g).
  SmallVector<Value> a{tf32(elementAt(rewriter, op.getA(), group, thread)),
                       tf32(elementAt(rewriter, op.getA(), groupBelow, thread)),
                       tf32(elementAt(rewriter, op.getA(), group, threadRight)),
                       tf32(elementAt(rewriter, op.getA(), groupBelow, threadRight))};
  SmallVector<Value> bv{tf32(elementAt(rewriter, op.getB(), thread, group)),
                        tf32(elementAt(rewriter, op.getB(), threadRight, group))};
  Type f32 = rewriter.getF32Type();
  Value matrixA = vector::FromElementsOp::create(rewriter, loc, VectorType::get({4, 1}, f32), a);
  Value matrixB = vector::FromElementsOp::create(rewriter, loc, VectorType::get({2, 1}, f32), bv);
  Value matrixC = vector::FromElementsOp::create(rewriter, loc, VectorType::get({2, 2}, f32), op.getAcc());
  Value d = nvgpu::MmaSyncOp::create(rewriter, loc, matrixA, matrixB, matrixC, ArrayRef<int64_t>{16, 8, 8},
                                     /*tf32Enabled=*/true);
  SmallVector<Value> results;
  for (int64_t i = 0; i < 4; ++i)
    results.push_back(vector::ExtractOp::create(rewriter, loc, d, ArrayRef<int64_t>{i / 2, i % 2}));
  rewriter.replaceOp(op, results);
}

void mlir::hexir::lowerWarpMmaToDotProducts(RewriterBase &rewriter, WarpMmaOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto [group, thread] = groupAndThread(rewriter, loc, op.getLane());
  SmallVector<Value> results;
  for (int64_t i = 0; i < 4; ++i) {
    // D element i: row g (+ 8 for i >= 2), column 2t (+ 1 for odd i).
    Value row = arith::AddIOp::create(rewriter, loc, group, index(rewriter, loc, 8 * (i / 2)));
    Value col = arith::AddIOp::create(rewriter, loc, arith::MulIOp::create(rewriter, loc, thread, index(rewriter, loc, 2)),
                                      index(rewriter, loc, i % 2));
    auto loop = scf::ForOp::create(rewriter, loc, index(rewriter, loc, 0), index(rewriter, loc, 8),
                                   index(rewriter, loc, 1), ValueRange{op.getAcc()[i]});
    OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
    Value k = loop.getInductionVar();
    Value product = arith::MulFOp::create(b, loc, roundToTf32(b, loc, elementAt(b, op.getA(), row, k)),
                                          roundToTf32(b, loc, elementAt(b, op.getB(), k, col)));
    Value sum = arith::AddFOp::create(b, loc, loop.getRegionIterArgs()[0], product);
    scf::YieldOp::create(b, loc, sum);
    results.push_back(loop.getResult(0));
  }
  rewriter.replaceOp(op, results);
}

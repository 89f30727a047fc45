//===- DotProducts.cpp - register tiles as int8 and bf16 dot products ----===//
#include "Target/Host/DotProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"

using namespace mlir;

namespace {

// The unsigned bytes [a0, a1] as the int16 pair (a0, a1) in each of `lanes` 32-bit lanes: the
// two bytes broadcast over half a vector as one int16 (vpbroadcastw xmm from memory), then
// widened to int16 (vpmovzxbw ymm). Widened first and broadcast as an int32, the bytes took a
// scalar load, a move into a vector register, a widening and a broadcast per row and step; an
// in-lane shuffle of a full-width broadcast needs its mask in a register, and a 6 x 2 tile's
// 12 accumulators, 2 weight vectors, broadcast and product then spill (16 registers).
Value broadcastPair(OpBuilder &b, Location loc, Value pair, int64_t lanes) {
  Type i8 = b.getIntegerType(8), i16 = b.getIntegerType(16);
  Value word = vector::ExtractOp::create(
      b, loc, vector::BitCastOp::create(b, loc, VectorType::get({1}, i16), pair), ArrayRef<int64_t>{0});
  Value bytes = vector::BitCastOp::create(b, loc, VectorType::get({2 * lanes}, i8),
                                          vector::BroadcastOp::create(b, loc, VectorType::get({lanes}, i16), word));
  return arith::ExtUIOp::create(b, loc, VectorType::get({2 * lanes}, i16), bytes);
}

// vector.contract(zext(U), sext(S), acc) over (rows..., column, units..., g) where U reads
// (rows..., g) and S reads (column, g) (every other dimension of extent 1), g the reduction of
// four innermost in both, the accumulator [rows..., column] with the column innermost: per row,
// the row's group of four broadcast as one int32 (`a`) and, per vector of columns, one
//   acc = vpdpbusd(acc, a, S[columns][4] as int32 lanes)
// which sums the four u8 x s8 products of each lane into it, exactly as the contraction does.
// The same with extf(U), extf(S) of bf16, g of two and f32 accumulators is one vdpbf16ps
// (AVX512-BF16) per row and vector of columns: f32 sums of bf16 products, which are exact.
// Without VNNI, an int8 one over pairs (g of two) is per row and vector of columns
//   acc += vpmaddwd(zext(a) as int16 pairs, sext(S[columns][2]) as int16 pairs)
// (SSE2, AVX2, AVX512BW): the two products of each lane, at most 255 x 128 each, summed
// exactly into int32 (the row's pair broadcast by broadcastPair). vpmaddubsw would take the
// bytes as they are, but its int16 sums of two products saturate (255 x 127 x 2 > 32767),
// which is why the bytes are widened first.
struct DotContraction : OpRewritePattern<vector::ContractionOp> {
  DotContraction(MLIRContext *ctx, int64_t int8Bits, int64_t bf16Bits, int64_t pairBits)
      : OpRewritePattern(ctx, /*benefit=*/10), int8Bits(int8Bits), bf16Bits(bf16Bits), pairBits(pairBits) {}

  LogicalResult matchAndRewrite(vector::ContractionOp op, PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD || !accType || accType.getRank() < 1 || accType.isScalable())
      return failure();
    bool isInt8 = accType.getElementType().isInteger(32);
    if (!(isInt8 ? int8Bits || pairBits : accType.getElementType().isF32() ? bf16Bits : 0))
      return failure();
    // int8 in groups of four with VNNI, else in pairs; the group's loop must match (below).
    bool pairs = isInt8 && !int8Bits;
    int64_t bits = pairs ? pairBits : isInt8 ? int8Bits : bf16Bits, lanes = bits / 32, G = isInt8 && !pairs ? 4 : 2;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap accMap = maps[2];
    // The unsigned operand (rows) and the signed one (columns), in either position; of bf16,
    // the one whose other dimension is the accumulator's innermost is the columns.
    Value u, s;
    AffineMap uMap, sMap;
    auto source = [&](Value v, bool isSigned) -> Value {
      Operation *def = v.getDefiningOp();
      bool kind = !isInt8    ? isa_and_nonnull<arith::ExtFOp>(def)
                  : isSigned ? isa_and_nonnull<arith::ExtSIOp>(def)
                             : isa_and_nonnull<arith::ExtUIOp>(def);
      auto type = kind ? dyn_cast<VectorType>(def->getOperand(0).getType()) : nullptr;
      Type element = type ? type.getElementType() : Type();
      return element && (isInt8 ? element.isInteger(8) : element.isBF16()) ? def->getOperand(0) : nullptr;
    };
    auto readsColumns = [&](AffineMap map) {
      return map.getNumResults() >= 2 &&
             map.getDimPosition(map.getNumResults() - 2) == accMap.getDimPosition(accMap.getNumResults() - 1);
    };
    if (Value lu = source(op.getLhs(), false), rs = source(op.getRhs(), true); lu && rs && (isInt8 || readsColumns(maps[1]))) {
      u = lu, s = rs, uMap = maps[0], sMap = maps[1];
    } else if (Value ls = source(op.getLhs(), true), ru = source(op.getRhs(), false); ls && ru) {
      u = ru, s = ls, uMap = maps[1], sMap = maps[0];
    } else {
      return failure();
    }
    auto uType = cast<VectorType>(u.getType()), sType = cast<VectorType>(s.getType());
    unsigned numDims = uMap.getNumDims();
    SmallVector<int64_t> size(numDims, 1);
    auto record = [&](AffineMap map, ArrayRef<int64_t> shape) {
      for (unsigned j = 0; j < map.getNumResults(); ++j)
        size[map.getDimPosition(j)] = shape[j];
    };
    record(uMap, uType.getShape());
    record(sMap, sType.getShape());
    record(accMap, accType.getShape());
    auto iterators = op.getIteratorTypesArray();
    unsigned uRank = uMap.getNumResults(), sRank = sMap.getNumResults(), accRank = accMap.getNumResults();
    if (uRank < 1 || sRank < 2 || uMap.getDimPosition(uRank - 1) != sMap.getDimPosition(sRank - 1))
      return failure();
    unsigned g = uMap.getDimPosition(uRank - 1);
    if (size[g] != G || iterators[g] != vector::IteratorType::reduction)
      return failure();
    // The column: S's one other dimension of more than one index, innermost in the accumulator.
    unsigned column = sMap.getDimPosition(sRank - 2);
    for (unsigned j = 0; j + 2 < sRank; ++j)
      if (size[sMap.getDimPosition(j)] != 1)
        return failure();
    if (accMap.getDimPosition(accRank - 1) != column || size[column] % lanes != 0)
      return failure();
    // Rows: U's dimensions of more than one index (g aside), parallel, in the accumulator's
    // order; every reduction but g has one index.
    SmallVector<unsigned> rows;
    for (unsigned j = 0; j + 1 < uRank; ++j)
      if (size[uMap.getDimPosition(j)] != 1)
        rows.push_back(uMap.getDimPosition(j));
    SmallVector<unsigned> accRows;
    for (unsigned j = 0; j + 1 < accRank; ++j)
      if (size[accMap.getDimPosition(j)] != 1)
        accRows.push_back(accMap.getDimPosition(j));
    if (rows != accRows)
      return failure();
    for (unsigned d = 0; d < numDims; ++d)
      if (d != g && iterators[d] == vector::IteratorType::reduction && size[d] != 1)
        return failure();

    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), element = cast<VectorType>(u.getType()).getElementType();
    // The intrinsic takes the accumulators as lanes of 32 bits and both operands as vectors of
    // their groups.
    auto laneType = VectorType::get({lanes}, accType.getElementType());
    StringAttr intrinsic = rewriter.getStringAttr(
        !isInt8       ? "llvm.x86.avx512bf16.dpbf16ps.512"
        : pairs       ? (bits == 512   ? "llvm.x86.avx512.pmaddw.d.512"
                         : bits == 256 ? "llvm.x86.avx2.pmadd.wd"
                                       : "llvm.x86.sse2.pmadd.wd")
        : bits == 512 ? "llvm.x86.avx512.vpdpbusd.512"
                      : "llvm.x86.avx512.vpdpbusd.256");
    // One row's group in every 32-bit lane: as one int32 (pairs: widened, broadcastPair).
    auto broadcastRow = [&](Value group) -> Value {
      if (pairs)
        return broadcastPair(rewriter, loc, group, lanes);
      Value word = vector::ExtractOp::create(
          rewriter, loc, vector::BitCastOp::create(rewriter, loc, VectorType::get({1}, i32), group),
          ArrayRef<int64_t>{0});
      return vector::BitCastOp::create(rewriter, loc, VectorType::get({lanes * G}, element),
                                       vector::BroadcastOp::create(rewriter, loc, VectorType::get({lanes}, i32), word));
    };
    // The accumulators `part` plus one row's products with a vector of columns: vpmaddwd sums
    // the pairs' products without an accumulator, so pairs add them.
    auto dotStep = [&](Value part, Value row, Value columnVector) -> Value {
      if (!pairs)
        return LLVM::CallIntrinsicOp::create(rewriter, loc, laneType, intrinsic, ValueRange{part, row, columnVector})
            .getResult(0);
      Value products =
          LLVM::CallIntrinsicOp::create(rewriter, loc, laneType, intrinsic, ValueRange{row, columnVector}).getResult(0);
      return arith::AddIOp::create(rewriter, loc, part, products);
    };
    int64_t columns = size[column];
    // S's column vectors: [lanes][G] each, one 32-bit lane per column.
    SmallVector<int64_t> sLead(sRank - 2, 0);
    Value sMatrix = sLead.empty() ? s : vector::ExtractOp::create(rewriter, loc, s, sLead).getResult();
    // Flat first, then sliced: the flat vector folds into the flattened load of the weights
    // (a slice of rows cast on its own would be lowered row by row).
    Value sFlat = vector::ShapeCastOp::create(rewriter, loc, VectorType::get({columns * G}, element), sMatrix);
    SmallVector<Value> columnVectors;
    for (int64_t c = 0; c < columns; c += lanes) {
      Value columnVector = vector::ExtractStridedSliceOp::create(rewriter, loc, sFlat, ArrayRef<int64_t>{c * G},
                                                                 ArrayRef<int64_t>{lanes * G}, ArrayRef<int64_t>{1});
      // (Pairs multiply int16 values: the signed bytes sign-extended.)
      if (pairs)
        columnVector = arith::ExtSIOp::create(rewriter, loc, VectorType::get({lanes * G}, rewriter.getIntegerType(16)),
                                              columnVector);
      columnVectors.push_back(columnVector);
    }
    int64_t numRows = 1;
    for (unsigned d : rows)
      numRows *= size[d];
    Value result = op.getAcc();
    SmallVector<int64_t> index(numDims, 0);
    for (int64_t r = 0; r < numRows; ++r) {
      // The row's index in each row dimension (row-major over `rows`).
      for (int64_t rest = r, j = static_cast<int64_t>(rows.size()) - 1; j >= 0; --j) {
        index[rows[j]] = rest % size[rows[j]];
        rest /= size[rows[j]];
      }
      SmallVector<int64_t> uPos, accPos;
      for (unsigned j = 0; j + 1 < uRank; ++j)
        uPos.push_back(index[uMap.getDimPosition(j)]);
      for (unsigned j = 0; j + 1 < accRank; ++j)
        accPos.push_back(index[accMap.getDimPosition(j)]);
      Value group = uPos.empty() ? u : vector::ExtractOp::create(rewriter, loc, u, uPos).getResult();
      Value broadcast = broadcastRow(group);
      Value accRow = accPos.empty() ? result : vector::ExtractOp::create(rewriter, loc, result, accPos).getResult();
      for (int64_t c = 0; c < columns; c += lanes) {
        Value part = vector::ExtractStridedSliceOp::create(rewriter, loc, accRow, ArrayRef<int64_t>{c},
                                                           ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
        Value dot = dotStep(part, broadcast, columnVectors[c / lanes]);
        accRow = vector::InsertStridedSliceOp::create(rewriter, loc, dot, accRow, ArrayRef<int64_t>{c},
                                                      ArrayRef<int64_t>{1});
      }
      result = accPos.empty() ? accRow : vector::InsertOp::create(rewriter, loc, accRow, result, accPos).getResult();
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  int64_t int8Bits, bf16Bits, pairBits;
};

} // namespace

void mlir::hexir::populateDotProductPatterns(RewritePatternSet &patterns, int64_t int8Bits, int64_t bf16Bits,
                                             int64_t pairBits) {
  if (int8Bits != 512 && int8Bits != 256)
    int8Bits = 0;
  if (bf16Bits != 512)
    bf16Bits = 0;
  if (int8Bits || (pairBits != 512 && pairBits != 256 && pairBits != 128))
    pairBits = 0;
  if (!int8Bits && !bf16Bits && !pairBits)
    return;
  patterns.add<DotContraction>(patterns.getContext(), int8Bits, bf16Bits, pairBits);
  // A register tile's weights [columns][G] are contiguous: read them as one vector (by default
  // each group would be a load of its own). Only contiguous transfers whose rows are under 128
  // bits are flattened (groups; in a float kernel, at most its single-element rows), never a
  // tile of whole vectors.
  vector::populateFlattenVectorTransferPatterns(patterns, /*targetVectorBitwidth=*/128);
}

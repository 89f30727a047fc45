//===- TileToThreads.cpp - one GPU thread per output element --------------===//
//
// A kernel becomes one scf.forall whose iterations are independent: the op computing the
// result is tiled to single elements (whole rows in a row kernel) and every producer inside the
// kernel is fused into the iteration, recomputed for the element it feeds. On a GPU the
// recomputation is cheap next to the memory traffic of an intermediate tensor, and one loop
// nest is one launch. Reductions stay sequential inside an iteration.
//
//===----------------------------------------------------------------------===//
#include "Target/Cuda/Passes.h"
#include "Dialect/Functions.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_TILETOTHREADS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// A pad as an elementwise op over the padded tensor: each element reads its source at the
// clamped index and selects the padding value outside the source. Tiling then gives each
// thread its element without a padded temporary.
FailureOr<Value> padAsElementwise(RewriterBase &rewriter, tensor::PadOp pad) {
  Value padValue = pad.getConstantPaddingValue();
  RankedTensorType type = pad.getResultType(), source = pad.getSourceType();
  if (!padValue || !type.hasStaticShape() || !source.hasStaticShape() ||
      ShapedType::isDynamicShape(pad.getStaticLow()))
    return failure();
  Location loc = pad.getLoc();
  // A constant yielded from inside the pad's region goes away with the pad: a copy outside.
  if (Operation *def = padValue.getDefiningOp(); def && pad->isProperAncestor(def))
    padValue = rewriter.clone(*def)->getResult(0);
  unsigned rank = type.getRank();
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  bool emptySource = source.getNumElements() == 0;
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        if (emptySource) {
          linalg::YieldOp::create(b, l, padValue);
          return;
        }
        Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        SmallVector<Value> index;
        for (unsigned d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (pad.getStaticLow()[d] == 0 && source.getDimSize(d) == type.getDimSize(d)) {
            index.push_back(i);  // not padded along d
            continue;
          }
          Value s = arith::SubIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, pad.getStaticLow()[d]));
          Value extent = arith::ConstantIndexOp::create(b, l, source.getDimSize(d));
          Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, s, zero);
          Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, s, extent);
          inside = arith::AndIOp::create(b, l, inside, arith::AndIOp::create(b, l, ge, lt));
          Value last = arith::ConstantIndexOp::create(b, l, source.getDimSize(d) - 1);
          index.push_back(arith::MaxSIOp::create(b, l, arith::MinSIOp::create(b, l, s, last), zero));
        }
        Value v = tensor::ExtractOp::create(b, l, pad.getSource(), index);
        linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, inside, v, padValue)});
      });
  return generic.getResult(0);
}

// Whether the kernel reduces along rows and reads the reduction back across the row (softmax,
// layer normalization): its threads then take whole rows, so each row is reduced once.
bool broadcastsAReduction(func::FuncOp fn) {
  bool found = false;
  fn.walk([&](linalg::LinalgOp op) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto producer = in->get().getDefiningOp<linalg::LinalgOp>();
      if (producer && producer.getNumReductionLoops() > 0 && !op.getMatchingIndexingMap(in).isPermutation())
        found = true;
    }
  });
  return found;
}

// Elements one thread of an elementwise kernel takes along the innermost loop: 4, one 128-bit
// load or store per operand, when every op of the kernel is elementwise (all loops parallel,
// identity output) over 32-bit elements with no index arithmetic, the innermost extent is a
// multiple of 4, and every operand is read contiguously along the innermost loop or not along
// it at all (a broadcast). Operands must be bindings of the kernel or results of its ops: a
// binding starts 64-byte aligned and its rows are whole multiples of 4 elements, so every
// thread's 4 elements start 16-byte aligned. 1 otherwise.
constexpr int64_t kVectorWidth = 4;

int64_t vectorWidth(func::FuncOp fn, linalg::LinalgOp root) {
  unsigned loops = root.getNumLoops();
  if (loops == 0)
    return 1;
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()) || ranges.back() % kVectorWidth != 0)
    return 1;
  auto is32Bit = [](Type t) {
    Type e = getElementTypeOrSelf(t);
    return e.isIntOrFloat() && e.getIntOrFloatBitWidth() == 32;
  };
  bool ok = true;
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (isa<tensor::EmptyOp>(op))
      continue;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      ok &= !isa<ShapedType>(c.getType());  // a tensor constant would be a global of unknown alignment
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.getNumLoops() != loops || linalgOp.getNumParallelLoops() != loops) {
      ok = false;
      break;
    }
    for (OpOperand &operand : op.getOpOperands()) {
      Value v = operand.get();
      if (isa<ShapedType>(v.getType()) && !is32Bit(v.getType()))
        ok = false;
      if (auto def = v.getDefiningOp(); def && !isa<linalg::LinalgOp, tensor::EmptyOp>(def) &&
                                          isa<ShapedType>(v.getType()))
        ok = false;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      if (linalgOp.isDpsInit(&operand) && !map.isIdentity())
        ok = false;
      // The innermost loop, if it indexes the operand, is its last dimension alone.
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        AffineExpr e = map.getResult(r);
        bool isLast = r + 1 == map.getNumResults();
        if (e.isFunctionOfDim(loops - 1) && !(isLast && e == getAffineDimExpr(loops - 1, fn.getContext())))
          ok = false;
      }
    }
    op.walk([&](Operation *inner) {
      if (isa<linalg::IndexOp, tensor::ExtractOp>(inner))
        ok = false;
    });
    if (!ok)
      break;
  }
  return ok ? kVectorWidth : 1;
}

// Tile sizes of the op computing a result: 1 for each parallel loop, the reductions whole
// (sequential in the thread); the innermost parallel loop whole in a row kernel.
SmallVector<int64_t> threadTile(TilingInterface root, bool rows) {
  SmallVector<utils::IteratorType> iterators = root.getLoopIteratorTypes();
  SmallVector<int64_t> sizes;
  for (utils::IteratorType it : iterators)
    sizes.push_back(it == utils::IteratorType::parallel ? 1 : 0);
  if (rows)
    for (unsigned i = iterators.size(); i-- > 0;)
      if (iterators[i] == utils::IteratorType::parallel) {
        sizes[i] = 0;
        break;
      }
  return sizes;
}

LogicalResult tileKernel(func::FuncOp fn) {
  IRRewriter rewriter(fn.getContext());
  bool rows = broadcastsAReduction(fn);
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  SmallVector<Operation *> roots;
  for (Value v : ret.getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || llvm::is_contained(roots, def))
      continue;
    if (auto pad = dyn_cast<tensor::PadOp>(def)) {
      rewriter.setInsertionPoint(pad);
      FailureOr<Value> elementwise = padAsElementwise(rewriter, pad);
      if (failed(elementwise))
        continue;
      rewriter.replaceOp(pad, *elementwise);
      def = elementwise->getDefiningOp();
    }
    if (isa<TilingInterface>(def) && isa<linalg::LinalgOp>(def))
      roots.push_back(def);
  }
  for (Operation *op : roots) {
    auto root = cast<TilingInterface>(op);
    SmallVector<int64_t> sizes = threadTile(root, rows);
    // One root (kernels of several results keep one element per thread).
    if (int64_t width = roots.size() == 1 && !rows ? vectorWidth(fn, cast<linalg::LinalgOp>(op)) : 1; width > 1) {
      sizes.back() = width;
      fn->setAttr(kCudaVectorWidthAttrName, rewriter.getI64IntegerAttr(width));
    }
    if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
      continue;  // nothing parallel: one thread runs the op as it is
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(fn.getContext(), sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> tiled = scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
    if (failed(tiled))
      return op->emitError("the CUDA target cannot tile this op to threads");
    for (OpResult r : op->getResults())
      if (Value replacement = tiled->replacements.lookup(r))
        rewriter.replaceAllUsesWith(r, replacement);
  }
  return success();
}

struct TileToThreadsPass : public mlir::hexir::impl::TileToThreadsBase<TileToThreadsPass> {
  void runOnOperation() override {
    for (func::FuncOp fn : kernelFunctions(getOperation()))
      if (!fn->hasAttr(kCudaStagedAttrName) && failed(tileKernel(fn)))
        return signalPassFailure();
  }
};

} // namespace

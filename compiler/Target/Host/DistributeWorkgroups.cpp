//===- DistributeWorkgroups.cpp - independent workgroups per kernel -------===//
//
// The host kernel ABI passes each kernel a workgroup range so that the runtime can split a
// dispatch over threads. This pass makes that range mean something: it tiles the kernel's
// ops along one output dimension and runs only the tiles of the requested workgroups.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_DISTRIBUTEWORKGROUPS
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using mlir::hexir::kWorkgroupsAttrName;
using mlir::hexir::WorkgroupRangeOp;

namespace {

struct Partition {
  unsigned outputDim = 0;      // the output dimension split into rows
  int64_t extent = 1;          // its size
  SmallVector<linalg::LinalgOp> ops;
  SmallVector<unsigned> loopDims;  // per op: the loop iterating outputDim
  int64_t work = 0;            // total loop iterations of the kernel
};

// The output buffers: the trailing `numOutputs` arguments.
std::optional<Partition> analyze(func::FuncOp fn, unsigned numOutputs) {
  unsigned numArgs = fn.getNumArguments();
  if (numOutputs == 0 || numOutputs > numArgs)
    return std::nullopt;
  SmallVector<BlockArgument> outputs;
  for (unsigned i = numArgs - numOutputs; i < numArgs; ++i)
    outputs.push_back(fn.getArgument(i));
  auto outType = dyn_cast<MemRefType>(outputs[0].getType());
  if (!outType || !outType.hasStaticShape())
    return std::nullopt;
  // Every use of an output must be as the init of a linalg op writing the whole buffer.
  llvm::SetVector<Operation *> writers;
  for (BlockArgument out : outputs) {
    if (out.getType() != outType)
      return std::nullopt;
    for (OpOperand &use : out.getUses()) {
      auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!op || !op.isDpsInit(&use) || op->getParentOp() != fn)
        return std::nullopt;
      writers.insert(op);
    }
  }
  if (writers.empty())
    return std::nullopt;
  Partition p;
  for (Operation *op : writers)
    p.ops.push_back(cast<linalg::LinalgOp>(op));
  for (linalg::LinalgOp op : p.ops) {
    int64_t iterations = 1;
    for (int64_t r : op.getStaticLoopRanges())
      iterations *= std::max<int64_t>(r, 1);
    p.work += iterations;
  }
  for (unsigned dim = 0; dim < outType.getRank(); ++dim) {
    if (outType.getDimSize(dim) < 2)
      continue;
    SmallVector<unsigned> loops;
    bool ok = true;
    for (linalg::LinalgOp op : p.ops) {
      std::optional<unsigned> loop;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        AffineMap map = op.getMatchingIndexingMap(&init);
        auto d = dyn_cast<AffineDimExpr>(map.getResult(dim));
        if (!d || !linalg::isParallelIterator(op.getIteratorTypesArray()[d.getPosition()]) ||
            (loop && *loop != d.getPosition())) {
          ok = false;
          break;
        }
        loop = d.getPosition();
      }
      if (!ok || !loop)
        break;
      loops.push_back(*loop);
    }
    if (ok && loops.size() == p.ops.size()) {
      p.outputDim = dim;
      p.extent = outType.getDimSize(dim);
      p.loopDims = loops;
      return p;
    }
  }
  return std::nullopt;
}

struct DistributeWorkgroupsPass
    : public mlir::hexir::impl::DistributeWorkgroupsBase<DistributeWorkgroupsPass> {
  using DistributeWorkgroupsBase::DistributeWorkgroupsBase;

  void runOnOperation() override {
    for (auto fn : llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (!fn.isDeclaration() && failed(distribute(fn)))
        return signalPassFailure();
  }

  LogicalResult distribute(func::FuncOp fn) {
    // Out-parameters come last; their number is recorded by the kernel lowering.
    auto numOutputsAttr = fn->getAttrOfType<IntegerAttr>("hexir.num_outputs");
    unsigned numOutputs = numOutputsAttr ? numOutputsAttr.getInt() : 0;
    std::optional<Partition> partition = analyze(fn, numOutputs);

    // The workgroup range arguments, on every kernel.
    OpBuilder b(fn.getContext());
    Type i32 = b.getI32Type();
    Location loc = fn.getLoc();
    unsigned first = fn.getNumArguments();
    if (failed(fn.insertArguments({first, first}, {i32, i32}, {DictionaryAttr(), DictionaryAttr()},
                                  {loc, loc})))
      return failure();
    Value begin = fn.getArgument(first), end = fn.getArgument(first + 1);

    // Split on tensors already (TileAndVectorize): the range op reads the new arguments.
    SmallVector<WorkgroupRangeOp> ranges;
    fn.walk([&](WorkgroupRangeOp op) { ranges.push_back(op); });
    if (!ranges.empty() || fn->hasAttr(kWorkgroupsAttrName)) {
      for (WorkgroupRangeOp op : ranges) {
        b.setInsertionPoint(op);
        Value lo = arith::IndexCastOp::create(b, op.getLoc(), b.getIndexType(), begin);
        Value hi = arith::IndexCastOp::create(b, op.getLoc(), b.getIndexType(), end);
        op.replaceAllUsesWith(ValueRange{lo, hi});
        op.erase();
      }
      if (!fn->hasAttr(kWorkgroupsAttrName))
        fn->setAttr(kWorkgroupsAttrName, b.getI64IntegerAttr(1));
      return success();
    }

    int64_t workgroups = 1;
    if (partition) {
      int64_t byWork = std::max<int64_t>(1, partition->work / std::max<int64_t>(1, minWork));
      workgroups = std::min({partition->extent, static_cast<int64_t>(maxWorkgroups), byWork});
    }
    if (workgroups <= 1) {
      fn->setAttr(mlir::hexir::kWorkgroupsAttrName, b.getI64IntegerAttr(1));
      return success();
    }
    int64_t chunk = (partition->extent + workgroups - 1) / workgroups;
    workgroups = (partition->extent + chunk - 1) / chunk;

    // rows [begin * chunk, min(end * chunk, extent))
    b.setInsertionPointToStart(&fn.getBody().front());
    Value chunkV = arith::ConstantIndexOp::create(b, loc, chunk);
    Value extentV = arith::ConstantIndexOp::create(b, loc, partition->extent);
    Value beginIdx = arith::IndexCastOp::create(b, loc, b.getIndexType(), begin);
    Value endIdx = arith::IndexCastOp::create(b, loc, b.getIndexType(), end);
    Value lower = arith::MulIOp::create(b, loc, beginIdx, chunkV);
    Value upper = arith::MinSIOp::create(b, loc, arith::MulIOp::create(b, loc, endIdx, chunkV), extentV);

    IRRewriter rewriter(fn.getContext());
    for (auto [op, loopDim] : llvm::zip(partition->ops, partition->loopDims)) {
      SmallVector<int64_t> tileSizes(op.getNumLoops(), 0);
      tileSizes[loopDim] = chunk;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tileSizes).setLoopType(linalg::LinalgTilingLoopType::Loops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled) || tiled->loops.size() != 1)
        return op.emitError() << "could not split the kernel into workgroups";
      auto loop = cast<scf::ForOp>(tiled->loops[0]);
      loop.getLowerBoundMutable().assign(lower);
      loop.getUpperBoundMutable().assign(upper);
      rewriter.eraseOp(op);
    }
    fn->setAttr(mlir::hexir::kWorkgroupsAttrName, b.getI64IntegerAttr(workgroups));
    return success();
  }
};

} // namespace

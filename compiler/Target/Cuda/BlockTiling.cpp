//===- BlockTiling.cpp - kernels tiled to thread blocks on tensors --------===//
#include "Target/Cuda/BlockTiling.h"

#include "Target/Cuda/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

bool isElementwiseOver(linalg::LinalgOp op, RankedTensorType shape) {
  if (op.getNumLoops() != op.getNumParallelLoops() || op.getNumDpsInits() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  return type && type.getShape() == shape.getShape() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
}

SmallVector<Attribute> mapping(MLIRContext *ctx, unsigned rank, bool blocks) {
  SmallVector<Attribute> attrs;
  for (unsigned i = 0; i < rank; ++i) {
    auto id = static_cast<gpu::MappingId>(static_cast<uint64_t>(gpu::MappingId::LinearDim0) + i);
    attrs.push_back(blocks ? Attribute(gpu::GPUBlockMappingAttr::get(ctx, id))
                           : Attribute(gpu::GPUThreadMappingAttr::get(ctx, id)));
  }
  return attrs;
}

} // namespace

std::optional<ReductionKernel> mlir::hexir::matchReductionKernel(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() != 1)
    return std::nullopt;
  ReductionKernel k;
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : body.without_terminator()) {
    if (isa<tensor::EmptyOp>(op) || (isa<arith::ConstantOp>(op) && !isa<ShapedType>(op.getResult(0).getType())))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() || linalgOp.hasDynamicShape())
      return std::nullopt;
    if (linalgOp.getNumReductionLoops() > 0) {
      if (k.reduction || linalgOp.getNumDpsInits() != 1)
        return std::nullopt;
      k.reduction = linalgOp;
    }
    ops.push_back(linalgOp);
  }
  if (!k.reduction)
    return std::nullopt;
  linalg::LinalgOp r = k.reduction;
  // Its inputs are bindings: the block's threads read them, nothing to fuse.
  for (OpOperand *in : r.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(in->get().getType());  // not a scalar (a zero point)
    if (!isa<BlockArgument>(in->get()) || !type || !type.getElementType().isIntOrFloat())
      return std::nullopt;
  }
  auto outType = cast<RankedTensorType>(r->getResult(0).getType());
  if (!r.getMatchingIndexingMap(r.getDpsInitOperand(0)).isProjectedPermutation())
    return std::nullopt;
  for (linalg::LinalgOp op : ops) {
    // Each op is read once: block tiling fuses a producer into every reader's slice, and the
    // reduction must be computed once per block.
    if (op->getResult(0) != ret.getOperand(0) && !op->hasOneUse())
      return std::nullopt;
    if (op == r)
      continue;
    // The initializer and the epilogue: elementwise over the reduction's output shape, none
    // writing over another's result (a bias added onto the matmul in place): an epilogue
    // writes the block's output, the reduction its accumulator.
    if (!isElementwiseOver(op, outType) ||
        llvm::any_of(op.getDpsInits(), [](Value v) { return v.getDefiningOp<linalg::LinalgOp>(); }))
      return std::nullopt;
  }
  k.root = ret.getOperand(0).getDefiningOp<linalg::LinalgOp>();
  if (!k.root)
    return std::nullopt;
  return k;
}

Value mlir::hexir::sharedTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return bufferization::AllocTensorOp::create(b, loc, type, ValueRange{}, Value(), Value(), space);
}

FailureOr<scf::ForallOp> mlir::hexir::tileToBlocks(RewriterBase &rewriter, linalg::LinalgOp root,
                                                   ArrayRef<int64_t> rootTile) {
  MLIRContext *ctx = root.getContext();
  scf::SCFTilingOptions blockTiling;
  blockTiling.setTileSizes(getAsIndexOpFoldResult(ctx, rootTile));
  blockTiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  blockTiling.setMapping(mapping(ctx, llvm::count_if(rootTile, [](int64_t t) { return t != 0; }), /*blocks=*/true));
  scf::SCFTileAndFuseOptions blockOptions;
  blockOptions.setTilingOptions(blockTiling);
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> blocks =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(root.getOperation()), blockOptions);
  if (failed(blocks) || blocks->loops.size() != 1)
    return root->emitError("the CUDA target cannot tile this kernel to thread blocks");
  for (OpResult r : root->getResults())
    if (Value replacement = blocks->replacements.lookup(r))
      rewriter.replaceAllUsesWith(r, replacement);
  if (root->use_empty())
    rewriter.eraseOp(root);
  return cast<scf::ForallOp>(blocks->loops.front().getOperation());
}

LogicalResult mlir::hexir::tileToThreads(RewriterBase &rewriter, TilingInterface op, ArrayRef<int64_t> sizes,
                                         bool fuse) {
  unsigned tiled = llvm::count_if(sizes, [](int64_t s) { return s != 0; });
  if (tiled == 0)
    return op->emitError("internal error: nothing to tile to threads");
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setMapping(mapping(rewriter.getContext(), tiled, /*blocks=*/false));
  rewriter.setInsertionPoint(op);
  if (fuse) {
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // Only linalg producers (the elementwise ops of an epilogue, an initializer): loops the
    // block already has (a staged contraction's steps, a thread loop) stay where they are.
    options.setFusionControlFn([](tensor::ExtractSliceOp, OpResult producer, bool)
                                   -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
      if (!isa<linalg::LinalgOp>(producer.getOwner()))
        return std::nullopt;
      return scf::SCFTileAndFuseOptions::ControlFnResult{};
    });
    FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
    if (failed(result))
      return op->emitError("the CUDA target cannot tile this op to the threads of a block");
    for (OpResult r : op->getResults())
      if (Value replacement = result->replacements.lookup(r))
        rewriter.replaceAllUsesWith(r, replacement);
    return success();
  }
  FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(rewriter, op, tiling);
  if (failed(result))
    return op->emitError("the CUDA target cannot tile this op to the threads of a block");
  rewriter.replaceOp(op, result->replacements);
  return success();
}

SmallVector<int64_t> mlir::hexir::elementTile(TilingInterface op) {
  SmallVector<int64_t> sizes;
  for (utils::IteratorType it : op.getLoopIteratorTypes())
    sizes.push_back(it == utils::IteratorType::parallel ? 1 : 0);
  return sizes;
}

LogicalResult mlir::hexir::finishBlocks(RewriterBase &rewriter, func::FuncOp fn, scf::ForallOp blocks) {
  // The block-level ops the thread loops now compute themselves, readers first.
  for (bool erased = true; erased;) {
    erased = false;
    blocks.getBody()->walk([&](Operation *op) {
      if (isOpTriviallyDead(op)) {
        rewriter.eraseOp(op);
        erased = true;
      }
    });
  }
  // Every op left in a block is inside a thread loop, or computes views and indices.
  Operation *stray = nullptr;
  blocks.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto inner = dyn_cast<scf::ForallOp>(op); inner && inner != blocks)
      return WalkResult::skip();
    if (isa<linalg::LinalgOp>(op)) {
      stray = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (stray)
    return stray->emitError("internal error: an op of a block-tiled kernel outside its thread loops");
  fn->setAttr(kCudaStagedAttrName, rewriter.getUnitAttr());
  return success();
}

//===- OutlineGpuKernels.cpp - loop nests of a kernel as CUDA kernels -----===//
//
// After bufferization a kernel is a sequence of loop nests over its bindings (usually one, the
// scf.forall TileToThreads made; a pad or a concatenation fills and copies). Each nest becomes
// a gpu.func taking every binding, launched with one thread per iteration of its outer
// parallel loops; the runtime launches a kernel's nests in order on one stream, which orders
// their writes as the host's sequential nests are ordered.
//
//===----------------------------------------------------------------------===//
#include "Target/Cuda/Passes.h"
#include "Dialect/Functions.h"
#include "Target/Cuda/ElideBarriers.h"
#include "Target/Cuda/PipelineCopies.h"
#include "Target/Cuda/TensorCoreTiles.h"
#include "Target/Cuda/ThreadPrivate.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_OUTLINEGPUKERNELS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

bool isNest(Operation &op) { return isa<scf::ForallOp, linalg::LinalgOp>(op); }

// The shared memory a block may declare statically (CheckSharedMemory checks it).
constexpr uint64_t kStaticSharedBytes = 48 * 1024;
// The most temporary bytes a kernel run by one thread may keep in its local memory.
constexpr int64_t kMaxSerialTemporaryBytes = 256 * 1024;
// The most local memory (stack frame) one CUDA thread may have.
constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024;

// Bytes of the thread's frame: its allocas (all in the entry block, of static shape).
int64_t localBytes(gpu::GPUFuncOp fn) {
  int64_t bytes = 0;
  fn.walk([&](memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    bytes += type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  });
  return bytes;
}

// Per-kernel scratch against what a thread may have: the error names the kernel and both sizes.
LogicalResult checkLocalMemory(gpu::GPUFuncOp fn) {
  int64_t bytes = localBytes(fn);
  fn->setAttr("hexir.stack_bytes", IntegerAttr::get(IntegerType::get(fn.getContext(), 64), bytes));
  if (bytes <= kMaxLocalBytesPerThread)
    return success();
  return fn.emitError() << "kernel '" << fn.getName() << "' needs " << bytes
                        << " bytes of local memory per thread (the temporaries of one thread's tile, such as a "
                           "row of a row kernel), over the "
                        << kMaxLocalBytesPerThread << " bytes a CUDA thread may have";
}

// A buffer only linalg ops read, and only for its shape (the window operand of a pooling).
bool isShapeOnly(Operation &op) {
  auto alloc = dyn_cast<memref::AllocOp>(op);
  return alloc && alloc.getType().hasStaticShape() && llvm::all_of(alloc->getUses(), [](OpOperand &use) {
           auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
           return linalgOp && linalgOp.isDpsInput(&use) && !linalgOp.payloadUsesValueFromOperand(&use);
         });
}

// Simple math NVPTX has instructions for, as LLVM intrinsic calls: the NVVM conversion would
// turn math.sqrt or llvm.intr.floor into calls of libdevice, which the PTX may not import.
template <typename MathOp>
struct MathToIntrinsic : OpRewritePattern<MathOp> {
  MathToIntrinsic(MLIRContext *ctx, StringRef name) : OpRewritePattern<MathOp>(ctx), name(name.str()) {}
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    Type type = op->getResult(0).getType();
    Type element = getElementTypeOrSelf(type);
    auto vector = dyn_cast<VectorType>(type);
    if ((!element.isF32() && !element.isF64()) || (vector && vector.getRank() != 1))
      return failure();
    // llvm.sqrt.f32, or llvm.sqrt.v4f32 on the vectors of an elementwise kernel.
    std::string suffix = element.isF32() ? "f32" : "f64";
    if (vector)
      suffix = "v" + std::to_string(vector.getNumElements()) + suffix;
    std::string intrinsic = "llvm." + name + "." + suffix;
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(op, type, rewriter.getStringAttr(intrinsic),
                                                       op->getOperands());
    return success();
  }
  std::string name;
};

// Iterations of a loop nest, all static (kernels have static shapes).
std::optional<int64_t> tripCount(ArrayRef<OpFoldResult> lbs, ArrayRef<OpFoldResult> ubs, ArrayRef<OpFoldResult> steps) {
  int64_t n = 1;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub), s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    n *= std::max<int64_t>((*u - *l + *s - 1) / *s, 0);
  }
  return n;
}
std::optional<int64_t> tripCount(scf::ParallelOp loop) {
  return tripCount(getAsOpFoldResult(loop.getLowerBound()), getAsOpFoldResult(loop.getUpperBound()),
                   getAsOpFoldResult(loop.getStep()));
}
std::optional<int64_t> tripCount(scf::ForallOp forall) {
  return tripCount(forall.getMixedLowerBound(), forall.getMixedUpperBound(), forall.getMixedStep());
}

// The induction values of a loop nest's iteration number `linear` (static bounds), innermost
// loop fastest: adjacent threads take adjacent elements.
SmallVector<Value> delinearize(RewriterBase &rewriter, Location loc, ArrayRef<OpFoldResult> lbs,
                               ArrayRef<OpFoldResult> ubs, ArrayRef<OpFoldResult> steps, Value linear) {
  SmallVector<Value> ivs(lbs.size());
  Value rest = linear;
  for (unsigned d = lbs.size(); d-- > 0;) {
    int64_t lb = *getConstantIntValue(lbs[d]), ub = *getConstantIntValue(ubs[d]), step = *getConstantIntValue(steps[d]);
    Value trips = arith::ConstantIndexOp::create(rewriter, loc, (ub - lb + step - 1) / step);
    Value i = d == 0 ? rest : arith::RemUIOp::create(rewriter, loc, rest, trips).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(rewriter, loc, rest, trips);
    ivs[d] = arith::AddIOp::create(rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, lb),
                                   arith::MulIOp::create(rewriter, loc, i, arith::ConstantIndexOp::create(rewriter, loc, step)));
  }
  return ivs;
}

// Moves the body of `loop` (an scf.parallel or scf.forall; its terminator dropped) before
// `before`, its induction variables replaced by `ivs`, and erases the loop.
void inlineLoop(RewriterBase &rewriter, Operation *loop, Block *body, Operation *before, ValueRange ivs) {
  for (auto [iv, value] : llvm::zip(body->getArguments(), ivs))
    rewriter.replaceAllUsesWith(iv, value);
  rewriter.eraseOp(body->getTerminator());
  before->getBlock()->getOperations().splice(Block::iterator(before), body->getOperations());
  rewriter.eraseOp(loop);
}

// The nest (already cloned into `fn`) as code for one thread: its outer parallel loop's
// iteration `blockIdx.x * blockDim.x + threadIdx.x` if there is one (threads past the last
// iteration do nothing), otherwise the whole nest on thread 0. Returns the iteration count.
FailureOr<int64_t> mapToThreads(IRRewriter &rewriter, Operation *nest, int64_t blockSize) {
  Location loc = nest->getLoc();
  scf::ParallelOp loop;
  if (auto forall = dyn_cast<scf::ForallOp>(nest)) {
    rewriter.setInsertionPoint(forall);
    if (failed(scf::forallToParallelLoop(rewriter, forall, &loop)))
      return forall.emitError("cannot convert this loop nest to a parallel loop");
    nest = loop;
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(nest)) {
    // Without a leading parallel loop (a rank-0 op, a full reduction), the op runs whole on
    // thread 0: it becomes sequential loops inside the guard below.
    SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
    if (!iterators.empty() && iterators.front() == utils::IteratorType::parallel) {
      rewriter.setInsertionPoint(nest);
      FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToParallelLoops(rewriter, linalgOp);
      if (failed(loops) || loops->empty())
        return nest->emitError("cannot convert this op to loops");
      rewriter.eraseOp(nest);
      nest = loops->front();
      loop = dyn_cast<scf::ParallelOp>(nest);
    }
  }
  int64_t iterations = 1;
  if (loop) {
    std::optional<int64_t> n = tripCount(loop);
    if (!n)
      return nest->emitError("a loop nest with dynamic bounds");
    iterations = *n;
  }
  rewriter.setInsertionPoint(nest);
  Value block = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value id = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, block, arith::ConstantIndexOp::create(rewriter, loc, blockSize)),
      thread);
  Value inRange = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, id,
                                        arith::ConstantIndexOp::create(rewriter, loc, loop ? iterations : 1));
  auto guard = scf::IfOp::create(rewriter, loc, inRange, /*withElseRegion=*/false);
  Block *then = guard.thenBlock();
  if (!loop) {
    rewriter.moveOpBefore(nest, then->getTerminator());
    return iterations;
  }
  rewriter.setInsertionPoint(then->getTerminator());
  SmallVector<Value> ivs = delinearize(rewriter, loc, getAsOpFoldResult(loop.getLowerBound()),
                                       getAsOpFoldResult(loop.getUpperBound()), getAsOpFoldResult(loop.getStep()), id);
  inlineLoop(rewriter, loop, loop.getBody(), then->getTerminator(), ivs);
  return iterations;
}

template <typename MappingAttr>
bool isMappedTo(scf::ForallOp forall) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  return mapping && !mapping->empty() && isa<MappingAttr>((*mapping)[0]);
}

struct StagedLaunch {
  int64_t blocks;
  int64_t threads;
};

// A block forall of StageContractions (already cloned into `gfn`): its iteration is the block
// index; its shared tensors become the kernel's workgroup memory; each thread forall inside
// becomes a loop from the thread index in steps of the block's size (kCudaThreadLoopAttrName),
// followed by a barrier, so the next loop reads what every thread wrote.
FailureOr<StagedLaunch> mapStagedNest(IRRewriter &rewriter, gpu::GPUFuncOp gfn, scf::ForallOp blocks,
                                      int64_t blockSize, bool tensorCores) {
  Location loc = blocks.getLoc();
  std::optional<int64_t> blockCount = tripCount(blocks);
  if (!blockCount)
    return blocks.emitError("a block loop with dynamic bounds");
  // Copies of a view onto itself (what bufferizing in place leaves where folding has not run).
  blocks.walk([&](memref::CopyOp copy) {
    if (copy.getSource() == copy.getTarget())
      rewriter.eraseOp(copy);
  });
  // TF32 allowed: a step that is a matrix product accumulates on tensor cores.
  if (tensorCores)
    useTensorCores(rewriter, gfn, blocks, blockSize / 32);
  SmallVector<scf::ForallOp> threadLoops;
  blocks.walk([&](scf::ForallOp forall) {
    if (isMappedTo<gpu::GPUThreadMappingAttr>(forall))
      threadLoops.push_back(forall);
  });
  int64_t most = 1;
  for (scf::ForallOp forall : threadLoops) {
    std::optional<int64_t> n = tripCount(forall);
    if (!n)
      return forall.emitError("a thread loop with dynamic bounds");
    most = std::max(most, *n);
  }
  int64_t threads = std::min<int64_t>(blockSize, std::max<int64_t>((most + 31) / 32 * 32, 32));
  // Tiles each thread keeps to itself (a contraction's accumulator): registers, not shared memory.
  privatizeThreadTiles(rewriter, gfn, blocks, threads);
  SmallVector<memref::AllocOp> shared;
  blocks.walk([&](memref::AllocOp alloc) {
    if (gpu::GPUDialect::isWorkgroupMemoryAddressSpace(alloc.getType().getMemorySpace()))
      shared.push_back(alloc);
  });
  for (memref::AllocOp alloc : shared) {
    if (!alloc.getType().hasStaticShape())
      return alloc.emitError("shared memory of dynamic size in a CUDA kernel");
    BlockArgument buffer = gfn.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
    gfn.setWorkgroupAttributionAttr(gfn.getNumWorkgroupAttributions() - 1, LLVM::LLVMDialect::getAlignAttrName(),
                                    rewriter.getI64IntegerAttr(kCudaSharedAlignment));
    rewriter.replaceOp(alloc, buffer);
  }
  rewriter.setInsertionPointToStart(&gfn.getBody().front());
  Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value stride = arith::ConstantIndexOp::create(rewriter, loc, threads);
  for (scf::ForallOp forall : threadLoops) {
    // (inlineLoop erases the forall: nothing reads it after.)
    Location threadLoc = forall.getLoc();
    rewriter.setInsertionPoint(forall);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, *tripCount(forall));
    auto loop = scf::ForOp::create(rewriter, threadLoc, thread, count, stride);
    loop->setAttr(kCudaThreadLoopAttrName, rewriter.getUnitAttr());
    rewriter.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs = delinearize(rewriter, threadLoc, forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                                         forall.getMixedStep(), loop.getInductionVar());
    inlineLoop(rewriter, forall, forall.getBody(), loop.getBody()->getTerminator(), ivs);
    rewriter.setInsertionPointAfter(loop);
    gpu::BarrierOp::create(rewriter, threadLoc);
  }
  rewriter.setInsertionPoint(blocks);
  Value block = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
  SmallVector<Value> ivs =
      delinearize(rewriter, loc, blocks.getMixedLowerBound(), blocks.getMixedUpperBound(), blocks.getMixedStep(), block);
  inlineLoop(rewriter, blocks, blocks.getBody(), blocks->getNextNode(), ivs);
  // Whatever writes memory is inside a thread loop: the code around them is the same for
  // every thread (views, indices, the steps' loop). A buffer outside them would be each
  // thread's own on the GPU but one in the emulator: only shared memory crosses a barrier.
  WalkResult stray = gfn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasAttr(kCudaThreadLoopAttrName) || op->hasAttr(kCudaThreadPrivateAttrName))
      return WalkResult::skip();
    if (isa<linalg::LinalgOp, memref::CopyOp, memref::StoreOp, memref::AllocOp, memref::AllocaOp>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (stray.wasInterrupted())
    return gfn.emitError("internal error: a write outside the thread loops of a staged kernel");
  elideBarriers(gfn);
  return StagedLaunch{*blockCount, threads};
}

// Inside a thread: temporaries on its stack (registers or local memory), copies and linalg ops
// as sequential loops.
LogicalResult lowerThreadBody(IRRewriter &rewriter, gpu::GPUFuncOp fn) {
  SmallVector<memref::AllocOp> allocs;
  fn.walk([&](memref::AllocOp op) { allocs.push_back(op); });
  for (memref::AllocOp alloc : allocs) {
    if (!alloc.getType().hasStaticShape())
      return alloc.emitError("a temporary of dynamic size in a CUDA kernel");
    // In the entry block: a fixed frame (NVPTX has no dynamic stack). A temporary's contents
    // never outlive one iteration, so the iterations of a thread can share it.
    rewriter.setInsertionPointToStart(&fn.getBody().front());
    auto alloca = memref::AllocaOp::create(rewriter, alloc.getLoc(), alloc.getType());
    // The 16-byte vector accesses of a vectorized kernel's thread hold for its frame too.
    if (fn->hasAttr(kCudaVectorWidthAttrName))
      alloca.setAlignment(16);
    rewriter.replaceOp(alloc, alloca);
  }
  SmallVector<memref::DeallocOp> deallocs;
  fn.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  for (memref::DeallocOp op : deallocs)
    rewriter.eraseOp(op);
  SmallVector<memref::CopyOp> copies;
  fn.walk([&](memref::CopyOp op) { copies.push_back(op); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), ValueRange{copy.getSource()}, ValueRange{copy.getTarget()});
    rewriter.eraseOp(copy);
  }
  SmallVector<linalg::LinalgOp> ops;
  fn.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  auto widthAttr = fn->getAttrOfType<IntegerAttr>(kCudaVectorWidthAttrName);
  // A staged kernel's copies into shared memory tiled to 4 elements a thread (StageContractions
  // tiles them so only where every 4 start 16 bytes aligned) move as one vector too.
  bool staged = fn->hasAttr(kCudaStagedAttrName);
  int64_t width = widthAttr ? widthAttr.getInt() : staged ? 4 : 0;
  bool vectorized = false;
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    // A thread's elements of an elementwise kernel (TileToThreads chose them): vector ops.
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (width && (!staged || isa<linalg::CopyOp>(op)) && !ranges.empty() && ranges.back() == width &&
        llvm::all_of(ArrayRef<int64_t>(ranges).drop_back(), [](int64_t r) { return r == 1; })) {
      FailureOr<linalg::VectorizationResult> vector = linalg::vectorize(rewriter, op);
      if (failed(vector))
        return op->emitError("cannot vectorize this op of an elementwise kernel");
      rewriter.eraseOp(op);
      vectorized = true;
      continue;
    }
    if (touchesThreadPrivate(op)) {
      if (failed(lowerOverThreadPrivate(rewriter, op)))
        return failure();
      continue;
    }
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return op->emitError("cannot convert this op to loops");
    rewriter.eraseOp(op);
  }
  if (!vectorized)
    return success();
  // Transfers of 1 x ... x 4 elements as 1-D loads and stores (a broadcast operand: one scalar
  // load), 16-byte aligned: TileToThreads only vectorizes kernels whose every 4-element
  // access starts at a multiple of 16 bytes, so NVPTX emits ld.global.v4 / st.global.v4.
  // In stages: together, the rank-reducing and the lowering patterns undo each other's work.
  MLIRContext *ctx = fn.getContext();
  RewritePatternSet rank(ctx), transfers(ctx), casts(ctx);
  vector::populateVectorTransferPermutationMapLoweringPatterns(rank);
  vector::populateCastAwayVectorLeadingOneDimPatterns(rank);
  vector::populateVectorTransferDropUnitDimsPatterns(rank);
  vector::populateVectorTransferLoweringPatterns(transfers, /*maxTransferRank=*/1);
  vector::populateVectorShapeCastLoweringPatterns(casts);
  vector::populateVectorBroadcastLoweringPatterns(casts);
  GreedyRewriteConfig bounded;
  bounded.setMaxNumRewrites(100000);  // a pattern cycle is an error, not an endless rewrite
  for (RewritePatternSet *stage : {&rank, &transfers, &casts})
    if (failed(applyPatternsGreedily(fn, std::move(*stage), bounded)))
      return fn.emitError("cannot lower the vector accesses of this kernel");
  uint64_t bytes = static_cast<uint64_t>(width) * 4;
  auto align = [&](Operation *op, VectorType type) {
    if (type.getRank() == 1 && type.getNumElements() == width)
      op->setAttr("alignment", rewriter.getI64IntegerAttr(static_cast<int64_t>(bytes)));
  };
  fn.walk([&](vector::LoadOp op) { align(op, op.getVectorType()); });
  fn.walk([&](vector::StoreOp op) { align(op, op.getVectorType()); });
  bool left = false;
  fn.walk([&](Operation *op) { left |= isa<vector::TransferReadOp, vector::TransferWriteOp>(op); });
  if (left)
    return fn.emitError("internal error: a vector transfer left in an elementwise CUDA kernel");
  return success();
}

// An empty gpu.func `name` in `gpuModule` taking `fn`'s bindings (mapped in `map`), the
// rewriter at the start of its body.
gpu::GPUFuncOp createKernel(IRRewriter &rewriter, func::FuncOp fn, gpu::GPUModuleOp gpuModule, StringRef name,
                            IRMapping &map) {
  rewriter.setInsertionPointToEnd(gpuModule.getBody());
  auto gfn = gpu::GPUFuncOp::create(rewriter, fn.getLoc(), name, fn.getFunctionType());
  gfn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), rewriter.getUnitAttr());
  if (Attribute width = fn->getAttr(kCudaVectorWidthAttrName))
    gfn->setAttr(kCudaVectorWidthAttrName, width);
  Block &entry = gfn.getBody().front();
  for (auto [from, to] : llvm::zip(fn.getArguments(), entry.getArguments()))
    map.map(from, to);
  rewriter.setInsertionPointToStart(&entry);
  return gfn;
}

struct OutlineGpuKernelsPass : public mlir::hexir::impl::OutlineGpuKernelsBase<OutlineGpuKernelsPass> {
  using OutlineGpuKernelsBase::OutlineGpuKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    SmallVector<func::FuncOp> kernels = kernelFunctions(module);
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), rewriter.getUnitAttr());
    rewriter.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(rewriter, module.getLoc(), kCudaKernelModuleName);
    for (func::FuncOp fn : kernels) {
      if (failed(outline(rewriter, fn, gpuModule)))
        return signalPassFailure();
      rewriter.eraseOp(fn);
    }
    // The PTX imports nothing: transcendental functions as polynomials, not libdevice calls.
    RewritePatternSet patterns(ctx);
    math::populateExpansionPatterns(patterns, {"powf", "fpowi", "tan", "sinh", "cosh", "asinh", "acosh", "atanh",
                                               "rsqrt"});
    populateMathPolynomialApproximationPatterns(patterns, MathPolynomialApproximationOptions{});
    if (failed(applyPatternsGreedily(gpuModule, std::move(patterns))))
      return signalPassFailure();
    RewritePatternSet intrinsics(ctx);
    intrinsics.add<MathToIntrinsic<math::SqrtOp>>(ctx, "sqrt");
    intrinsics.add<MathToIntrinsic<math::AbsFOp>>(ctx, "fabs");
    intrinsics.add<MathToIntrinsic<math::FloorOp>>(ctx, "floor");
    intrinsics.add<MathToIntrinsic<math::CeilOp>>(ctx, "ceil");
    intrinsics.add<MathToIntrinsic<math::TruncOp>>(ctx, "trunc");
    intrinsics.add<MathToIntrinsic<math::RoundOp>>(ctx, "round");
    intrinsics.add<MathToIntrinsic<math::RoundEvenOp>>(ctx, "roundeven");
    intrinsics.add<MathToIntrinsic<math::CopySignOp>>(ctx, "copysign");
    intrinsics.add<MathToIntrinsic<math::FmaOp>>(ctx, "fma");
    if (failed(applyPatternsGreedily(gpuModule, std::move(intrinsics))))
      return signalPassFailure();
    // A multiply and the add of its product may contract into one fma (one rounding), as
    // cuBLAS and PyTorch's CUDA kernels do for f32: without the flag NVPTX keeps them apart
    // as explicitly rounded mul.rn / add.rn, which ptxas may not fuse.
    gpuModule.walk([&](arith::ArithFastMathInterface op) {
      auto flags = op->getAttrOfType<arith::FastMathFlagsAttr>(op.getFastMathAttrName());
      arith::FastMathFlags value = flags ? flags.getValue() : arith::FastMathFlags::none;
      op->setAttr(op.getFastMathAttrName(), arith::FastMathFlagsAttr::get(ctx, value | arith::FastMathFlags::contract));
    });
  }

  // The chip's compute capability x 10 (sm_90: 90); 0 for a name this does not read.
  int64_t computeCapability() const {
    int64_t value = 0;
    StringRef digits = StringRef(chip).drop_front(3).take_while([](char c) { return llvm::isDigit(c); });
    if (!StringRef(chip).starts_with("sm_") || digits.getAsInteger(10, value))
      return 0;
    return value;
  }

  // A kernel whose nests pass a temporary buffer to each other (one TileToThreads could not
  // fuse, such as the reductions of a rank-1 softmax) runs whole on one thread, its
  // temporaries in that thread's local memory: correct for the small kernels this happens to,
  // slow for anything large, refused above a bound.
  LogicalResult outlineSerial(IRRewriter &rewriter, func::FuncOp fn, gpu::GPUModuleOp gpuModule,
                              MutableArrayRef<memref::AllocOp> temporaries) {
    int64_t bytes = 0;
    for (memref::AllocOp alloc : temporaries) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape())
        return alloc.emitError("a temporary of dynamic size in a CUDA kernel");
      bytes += type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    }
    if (bytes > kMaxSerialTemporaryBytes)
      return temporaries.front().emitError()
             << "kernel '" << fn.getSymName() << "' needs " << bytes
             << " bytes of temporary buffers between its loop nests, more than the " << kMaxSerialTemporaryBytes
             << " bytes of local memory the CUDA target gives one thread";
    IRMapping map;
    gpu::GPUFuncOp gfn = createKernel(rewriter, fn, gpuModule, fn.getSymName(), map);
    for (Operation &op : fn.getBody().front().without_terminator())
      rewriter.clone(op, map);
    gpu::ReturnOp::create(rewriter, fn.getLoc());
    SmallVector<scf::ForallOp> foralls;
    gfn.walk([&](scf::ForallOp op) { foralls.push_back(op); });
    for (scf::ForallOp forall : foralls) {
      rewriter.setInsertionPoint(forall);
      if (failed(scf::forallToParallelLoop(rewriter, forall)))
        return forall.emitError("cannot convert this loop nest to a loop");
    }
    if (failed(lowerThreadBody(rewriter, gfn)) || failed(checkLocalMemory(gfn)))
      return failure();
    gfn.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({1, 1, 1}));
    gfn->setAttr(kCudaWorkgroupsAttrName, rewriter.getI64IntegerAttr(1));
    gfn->setAttr(kCudaWorkgroupSizeAttrName, rewriter.getI64IntegerAttr(1));
    return success();
  }

  LogicalResult outline(IRRewriter &rewriter, func::FuncOp fn, gpu::GPUModuleOp gpuModule) {
    Block &body = fn.getBody().front();
    // Copies between bindings (a slice, a concatenation) are nests too.
    for (auto copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), ValueRange{copy.getSource()}, ValueRange{copy.getTarget()});
      rewriter.eraseOp(copy);
    }
    SmallVector<Operation *> nests;
    SmallVector<memref::AllocOp> temporaries;
    for (Operation &op : body.without_terminator()) {
      if (isNest(op)) {
        nests.push_back(&op);
      } else if (isShapeOnly(op)) {
        continue;  // cloned into each nest's function, where it becomes a thread's alloca
      } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        temporaries.push_back(alloc);
      } else if (!isMemoryEffectFree(&op)) {
        return op.emitError() << "the CUDA target cannot run '" << op.getName()
                              << "' outside a loop nest of kernel '" << fn.getSymName() << "'";
      }
    }
    if (!temporaries.empty())
      return outlineSerial(rewriter, fn, gpuModule, temporaries);
    for (auto [k, nest] : llvm::enumerate(nests)) {
      std::string name = fn.getSymName().str();
      if (k > 0)
        name += "__" + std::to_string(k);
      IRMapping map;
      gpu::GPUFuncOp gfn = createKernel(rewriter, fn, gpuModule, name, map);
      // Views of the bindings and constants the nest reads (unused ones fold away).
      for (Operation &op : body.without_terminator())
        if (!isNest(op))
          rewriter.clone(op, map);
      Operation *clone = rewriter.clone(*nest, map);
      gpu::ReturnOp::create(rewriter, fn.getLoc());
      if (auto blocks = dyn_cast<scf::ForallOp>(clone); blocks && isMappedTo<gpu::GPUBlockMappingAttr>(blocks)) {
        gfn->setAttr(kCudaStagedAttrName, rewriter.getUnitAttr());
        FailureOr<StagedLaunch> launch = mapStagedNest(rewriter, gfn, blocks, blockSize,
                                                             allowTf32 && computeCapability() >= 80);
        if (failed(launch))
          return failure();
        // cp.async: sm_80 and newer.
        uint64_t limit = capacity > 0 ? std::min<uint64_t>(capacity, kStaticSharedBytes) : kStaticSharedBytes;
        bool async = computeCapability() >= 80 && pipelineCopies(rewriter, gfn, static_cast<int64_t>(limit)) > 0;
        if (failed(lowerThreadBody(rewriter, gfn)) || (async && failed(makeCopiesAsync(rewriter, gfn))) ||
            failed(checkLocalMemory(gfn)))
          return failure();
        gfn.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({static_cast<int32_t>(launch->threads), 1, 1}));
        gfn->setAttr(kCudaWorkgroupsAttrName, rewriter.getI64IntegerAttr(launch->blocks));
        gfn->setAttr(kCudaWorkgroupSizeAttrName, rewriter.getI64IntegerAttr(launch->threads));
        continue;
      }
      FailureOr<int64_t> iterations = mapToThreads(rewriter, clone, blockSize);
      if (failed(iterations) || failed(lowerThreadBody(rewriter, gfn)) || failed(checkLocalMemory(gfn)))
        return failure();
      // Blocks of `blockSize` threads; a nest smaller than that gets one block of whole warps.
      int64_t threads = std::min<int64_t>(blockSize, std::max<int64_t>((*iterations + 31) / 32 * 32, 32));
      int64_t blocks = std::max<int64_t>((*iterations + threads - 1) / threads, 1);
      if (threads != blockSize) {
        // The thread index computation assumed blockSize; with one block it is the same.
        if (blocks != 1)
          return fn.emitError("internal error: a partial block in a multi-block launch");
      }
      gfn.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
      gfn->setAttr(kCudaWorkgroupsAttrName, rewriter.getI64IntegerAttr(blocks));
      gfn->setAttr(kCudaWorkgroupSizeAttrName, rewriter.getI64IntegerAttr(threads));
    }
    return success();
  }
};

} // namespace

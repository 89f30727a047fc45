//===- EmulateGpuKernels.cpp - CUDA kernels as host loops -----------------===//
#include "Target/Cuda/Passes.h"
#include "Target/Cuda/ThreadPrivate.h"
#include "Target/Cuda/WarpMma.h"
#include "Target/Host/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_EMULATEGPUKERNELS
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// The fault record emulated kernels write when an alignment check fails, and its words
// (hal/executable.h, HostKernelFault: the runtime reads it after each dispatch).
constexpr llvm::StringLiteral kFaultSymbol = "hexir_kernel_fault";
enum FaultWord : int64_t { kKind, kSpace, kBuffer, kOffset, kBytes, kAlignment, kBlock, kThread, kFaultWords };
enum FaultKind : int64_t { kMisalignedLoad = 1, kMisalignedStore = 2 };
enum GpuSpace : int64_t { kGlobal = 1, kShared = 3, kLocal = 5 };
// Where a CUDA kernel's bindings start on the GPU, at least (serializer/file_format.h,
// kCudaBindingAlignment: the loader refuses an executable whose bindings do not).
constexpr int64_t kBindingAlignment = 16;

// A buffer of the emulated kernel as it is on the GPU: its state space, its number (binding,
// shared buffer), and the alignment of its start there.
struct GpuBuffer {
  GpuSpace space;
  int64_t number;
  int64_t alignment;
};

// Checks the alignment of every vector access of an emulated kernel as the GPU would: each
// load or store must be at an address that is a multiple of the alignment LLVM is told it has
// (its `alignment`, or its element's), counted from the start of its buffer on the GPU. A
// failing check writes the fault record; the host runtime reports it, naming the kernel.
struct AlignmentChecks {
  StringRef kernel;
  llvm::DenseMap<Value, GpuBuffer> buffers;  // the emulated function's buffers
  Value block;
  std::function<Value(OpBuilder &, Operation *)> thread;  // the GPU thread running an op

  LogicalResult insert(Operation *root) {
    SmallVector<Operation *> accesses;
    root->walk([&](Operation *op) {
      if (isa<vector::LoadOp, vector::StoreOp>(op))
        accesses.push_back(op);
    });
    for (Operation *op : accesses)
      if (failed(check(op)))
        return failure();
    return success();
  }

  LogicalResult check(Operation *op) {
    bool store = isa<vector::StoreOp>(op);
    auto memref = store ? cast<vector::StoreOp>(op).getBase() : cast<vector::LoadOp>(op).getBase();
    ValueRange indices = store ? cast<vector::StoreOp>(op).getIndices() : cast<vector::LoadOp>(op).getIndices();
    VectorType vector = store ? cast<vector::StoreOp>(op).getVectorType() : cast<vector::LoadOp>(op).getVectorType();
    auto type = cast<MemRefType>(memref.getType());
    int64_t element = (type.getElementTypeBitWidth() + 7) / 8;
    int64_t needed = element;
    if (auto align = op->getAttrOfType<IntegerAttr>("alignment"))
      needed = std::max<int64_t>(needed, align.getInt());
    // (A host caller's tensor may be bound where it is, aligned to its elements only: the
    // emulated access itself asks for no more.)
    op->removeAttr("alignment");
    Value root = memref;
    while (auto view = root.getDefiningOp<ViewLikeOpInterface>())
      root = view.getViewSource();
    auto found = buffers.find(root);
    if (found == buffers.end())
      return op->emitError("the CUDA emulator cannot tell which buffer of kernel '")
             << kernel << "' this vector access is into";
    GpuBuffer buffer = found->second;
    if (buffer.alignment < needed)
      return op->emitError("kernel '") << kernel << "' accesses " << needed << "-byte aligned vectors of a buffer "
                                       << "aligned to " << buffer.alignment << " bytes on the GPU";
    if (needed <= element)
      return success();  // every element is where an access of one may be
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
    // Bytes from the start of the buffer: (the view's offset + sum of index x stride) elements
    // past the view's aligned pointer, less where the buffer itself starts.
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value linear = metadata.getOffset();
    for (auto [i, stride] : llvm::zip(indices, metadata.getStrides()))
      linear = arith::AddIOp::create(b, loc, linear, arith::MulIOp::create(b, loc, i, stride));
    Value address = arith::AddIOp::create(b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref),
                                          arith::MulIOp::create(b, loc, linear, index(element)));
    auto rootMetadata = memref::ExtractStridedMetadataOp::create(b, loc, root);
    Value start = arith::AddIOp::create(b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, root),
                                        arith::MulIOp::create(b, loc, rootMetadata.getOffset(), index(element)));
    Value offset = arith::SubIOp::create(b, loc, address, start);
    Value misaligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             arith::RemUIOp::create(b, loc, offset, index(needed)), index(0));
    auto report = scf::IfOp::create(b, loc, misaligned, /*withElseRegion=*/false);
    b.setInsertionPoint(report.thenBlock()->getTerminator());
    auto recordType = MemRefType::get({kFaultWords}, b.getI64Type());
    Value record = memref::GetGlobalOp::create(b, loc, recordType, kFaultSymbol);
    auto put = [&](FaultWord word, Value v) {
      Value i64 = v.getType().isIndex() ? arith::IndexCastUIOp::create(b, loc, b.getI64Type(), v).getResult() : v;
      memref::StoreOp::create(b, loc, i64, record, index(word));
    };
    put(kSpace, index(buffer.space));
    put(kBuffer, index(buffer.number));
    put(kOffset, offset);
    put(kBytes, index(vector.getNumElements() * element));
    put(kAlignment, index(needed));
    put(kBlock, block);
    put(kThread, thread(b, op));
    put(kKind, index(store ? kMisalignedStore : kMisalignedLoad));  // last: the record is whole
    return success();
  }
};

// cp.async (PipelineCopies.h) as the copies it makes: the emulator runs a block's threads loop
// by loop, so a copy done when issued is what waiting for it gives. A copy of several elements
// is a vector access with the alignment cp.async needs of both addresses (AlignmentChecks
// checks it); the groups and waits have nothing left to do.
LogicalResult synchronousCopies(gpu::GPUFuncOp gfn) {
  SmallVector<Operation *> ops;
  gfn.walk([&](Operation *op) {
    if (isa<nvgpu::DeviceAsyncCopyOp, NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op);
    if (!copy) {
      op->erase();
      continue;
    }
    if (copy.getSrcElements() || !copy->use_empty())
      return copy.emitError("the CUDA emulator models cp.async copies of whole vectors, outside token groups");
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    auto dstType = cast<MemRefType>(copy.getDst().getType());
    int64_t elements = copy.getDstElements().getZExtValue();
    if (elements == 1) {
      Value v = memref::LoadOp::create(b, loc, copy.getSrc(), copy.getSrcIndices());
      memref::StoreOp::create(b, loc, v, copy.getDst(), copy.getDstIndices());
    } else {
      auto vectorType = VectorType::get({elements}, dstType.getElementType());
      int64_t bytes = elements * ((dstType.getElementTypeBitWidth() + 7) / 8);
      auto load = vector::LoadOp::create(b, loc, vectorType, copy.getSrc(), copy.getSrcIndices());
      load->setAttr("alignment", b.getI64IntegerAttr(bytes));
      auto store = vector::StoreOp::create(b, loc, load, copy.getDst(), copy.getDstIndices());
      store->setAttr("alignment", b.getI64IntegerAttr(bytes));
    }
    copy.erase();
  }
  return success();
}

struct EmulateGpuKernelsPass : public mlir::hexir::impl::EmulateGpuKernelsBase<EmulateGpuKernelsPass> {
  using EmulateGpuKernelsBase::EmulateGpuKernelsBase;

  // The index a loop over [lb, ub) gives at iteration `iv`: iv itself, or lb + ub - 1 - iv.
  Value ordered(OpBuilder &b, Location loc, Value iv, Value lb, Value ub) {
    if (!reverse)
      return iv;
    Value last = arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, lb, ub),
                                       arith::ConstantIndexOp::create(b, loc, 1));
    return arith::SubIOp::create(b, loc, last, iv);
  }

  // The frame of one call (`body`'s allocas, which every emulated thread and block reuses),
  // then the loop over the call's blocks (a host workgroup range); the builder is left inside
  // it. Returns the block index.
  Value beginBlockLoop(OpBuilder &b, Location loc, Block &body, IRMapping &map, AlignmentChecks &checks) {
    for (auto alloca : body.getOps<memref::AllocaOp>()) {
      Operation *frame = b.clone(*alloca, map);
      int64_t element = (alloca.getType().getElementTypeBitWidth() + 7) / 8;
      checks.buffers[frame->getResult(0)] = {kLocal, 0, static_cast<int64_t>(alloca.getAlignment().value_or(element))};
    }
    auto range = WorkgroupRangeOp::create(b, loc, b.getIndexType(), b.getIndexType());
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blockLoop = scf::ForOp::create(b, loc, range.getBegin(), range.getEnd(), one);
    b.setInsertionPointToStart(blockLoop.getBody());
    return ordered(b, loc, blockLoop.getInductionVar(), range.getBegin(), range.getEnd());
  }

  // The kernel's code (its allocas already cloned) at the builder, with the block and thread
  // indices given. A staged kernel's barriers come along (emulateStaged removes them); any
  // other GPU op is an error. Every vector access is checked against the alignment it would
  // need on the GPU (AlignmentChecks).
  LogicalResult cloneBody(OpBuilder &b, Block &body, IRMapping &map, Value blockId, Value threadId, bool staged,
                          AlignmentChecks &checks) {
    for (Operation &op : body.without_terminator()) {
      if (isa<memref::AllocaOp>(op))
        continue;
      if (auto id = dyn_cast<gpu::BlockIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
        map.map(id.getResult(), blockId);
      } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op); id && id.getDimension() == gpu::Dimension::x) {
        map.map(id.getResult(), threadId);
      } else if (!staged && isa<gpu::GPUDialect>(op.getDialect())) {
        return op.emitError("the CUDA emulator does not model '") << op.getName() << "'";
      } else if (failed(checks.insert(b.clone(op, map)))) {
        return failure();
      }
    }
    return success();
  }

  // Copies thread `thread`'s private tile between its place in `all` (threads x tile) and
  // `frame` (the tile), element by element.
  void copyTile(OpBuilder &b, Location loc, Value all, Value thread, Value frame, bool toFrame) {
    auto type = cast<MemRefType>(frame.getType());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> indices;
    OpBuilder::InsertionGuard guard(b);
    for (int64_t extent : type.getShape()) {
      auto loop = scf::ForOp::create(b, loc, zero, arith::ConstantIndexOp::create(b, loc, extent), one);
      b.setInsertionPointToStart(loop.getBody());
      indices.push_back(loop.getInductionVar());
    }
    SmallVector<Value> at{thread};
    llvm::append_range(at, indices);
    if (toFrame)
      memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, all, at), frame, indices);
    else
      memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, frame, indices), all, at);
  }

  // A staged kernel (StageContractions) runs its threads loop by loop: each thread loop (from
  // the thread index, in steps of the block size, a barrier after it) becomes one loop over
  // all of its iterations, run by the emulated block, and the code around the thread loops,
  // the same for every thread, runs once per block. Everything that crosses a barrier is in
  // shared memory (the block's own allocas here), so this computes what the GPU computes.
  LogicalResult emulateStaged(OpBuilder &b, gpu::GPUFuncOp gfn, func::FuncOp fn, IRMapping &map, int64_t threads,
                              AlignmentChecks &checks) {
    Location loc = gfn.getLoc();
    bool misplaced = false;
    gfn.walk([&](gpu::ThreadIdOp id) {
      for (Operation *user : id->getUsers()) {
        auto loop = dyn_cast<scf::ForOp>(user);
        misplaced |= !loop || !loop->hasAttr(kCudaThreadLoopAttrName) || loop.getLowerBound() != id.getResult() ||
                     getConstantIntValue(loop.getStep()) != threads;
      }
    });
    if (misplaced)
      return gfn.emitError("the CUDA emulator runs staged kernels whose thread index only starts thread loops");
    Block &body = gfn.getBody().front();
    auto stripped = [](Type type) -> Type {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
        return type;
      return MemRefType::Builder(memref).setMemorySpace(Attribute());
    };
    // Shared memory: the block's, one frame reused by the blocks this call runs in turn.
    for (auto [index, shared] : llvm::enumerate(gfn.getWorkgroupAttributions())) {
      auto align = dyn_cast_or_null<IntegerAttr>(
          gfn.getWorkgroupAttributionAttr(index, LLVM::LLVMDialect::getAlignAttrName()));
      int64_t alignment = align ? align.getInt() : 1;
      auto alloca = memref::AllocaOp::create(b, loc, cast<MemRefType>(stripped(shared.getType())), ValueRange{},
                                             b.getI64IntegerAttr(alignment));
      map.map(shared, alloca);
      checks.buffers[alloca] = {kShared, static_cast<int64_t>(index), alignment};
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    // A thread's private tile (ThreadPrivate.h) outlives a barrier: every thread's copy is kept
    // here, and the one frame the emulated threads share is loaded and saved around each
    // iteration of a thread loop that uses it.
    SmallVector<std::pair<memref::AllocaOp, Value>> privateTiles;
    for (auto alloca : body.getOps<memref::AllocaOp>())
      if (alloca->hasAttr(kCudaThreadPrivateAttrName)) {
        SmallVector<int64_t> shape{threads};
        llvm::append_range(shape, alloca.getType().getShape());
        privateTiles.emplace_back(
            alloca, memref::AllocaOp::create(b, loc, MemRefType::get(shape, alloca.getType().getElementType())));
      }
    Value blockId = beginBlockLoop(b, loc, body, map, checks);
    checks.block = blockId;
    // The GPU thread of an access: its thread loop's iteration modulo the block's threads.
    checks.thread = [threads](OpBuilder &ob, Operation *op) -> Value {
      for (auto loop = op->getParentOfType<scf::ForOp>(); loop; loop = loop->getParentOfType<scf::ForOp>())
        if (loop->hasAttr(kCudaThreadLoopAttrName))
          return arith::RemUIOp::create(ob, op->getLoc(), loop.getInductionVar(),
                                        arith::ConstantIndexOp::create(ob, op->getLoc(), threads));
      return arith::ConstantIndexOp::create(ob, op->getLoc(), 0);
    };
    // The first thread's start: each thread loop then runs all of its iterations.
    if (failed(cloneBody(b, body, map, blockId, zero, /*staged=*/true, checks)))
      return failure();
    b.setInsertionPointToEnd(&fn.getBody().front());
    func::ReturnOp::create(b, loc);
    // Every iteration of a thread loop, in order (or reversed), then what the barrier guards.
    SmallVector<scf::ForOp> threadLoops;
    SmallVector<Operation *> barriers;
    bool unmodeled = false;
    fn.walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop->hasAttr(kCudaThreadLoopAttrName)) {
        threadLoops.push_back(loop);
      } else if (isa<gpu::BarrierOp>(op)) {
        barriers.push_back(op);
      } else if (isa<gpu::GPUDialect>(op->getDialect())) {
        op->emitError("the CUDA emulator does not model '") << op->getName() << "' in a staged kernel";
        unmodeled = true;
      }
    });
    for (Operation *barrier : barriers)
      barrier->erase();
    llvm::DenseMap<Operation *, Value> iterations;  // reversed: the iteration each loop runs
    for (scf::ForOp loop : threadLoops) {
      OpBuilder inner(loop);
      loop.getStepMutable().assign(arith::ConstantIndexOp::create(inner, loc, 1));
      loop->removeAttr(kCudaThreadLoopAttrName);
      if (!reverse)
        continue;
      inner.setInsertionPointToStart(loop.getBody());
      Value iv = loop.getInductionVar();
      Value index = ordered(inner, loc, iv, loop.getLowerBound(), loop.getUpperBound());
      iv.replaceAllUsesExcept(index, index.getDefiningOp());
      iterations[loop] = index;
    }
    for (scf::ForOp loop : threadLoops) {
      // The thread an iteration is (a private tile's loop has at most one iteration a thread).
      Value thread = iterations.lookup(loop);
      if (!thread)
        thread = loop.getInductionVar();
      for (auto [alloca, threadsCopies] : privateTiles) {
        Value frame = map.lookup(alloca.getResult());
        bool used = llvm::any_of(frame.getUsers(), [&](Operation *user) { return loop->isProperAncestor(user); });
        if (!used)
          continue;
        OpBuilder inner(loop.getBody(), loop.getBody()->begin());
        if (Operation *def = thread.getDefiningOp())
          inner.setInsertionPointAfter(def);
        copyTile(inner, loc, threadsCopies, thread, frame, /*toFrame=*/true);
        inner.setInsertionPoint(loop.getBody()->getTerminator());
        copyTile(inner, loc, threadsCopies, thread, frame, /*toFrame=*/false);
      }
    }
    fn.walk([&](Operation *op) {
      for (Value v : op->getResults())
        v.setType(stripped(v.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(stripped(arg.getType()));
    });
    return failure(unmodeled);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModuleName);
    if (!gpuModule)
      return;
    OpBuilder b(module.getContext());
    // The fault record, exported by the kernel library (the runtime finds it by name).
    b.setInsertionPointToEnd(module.getBody());
    auto recordType = MemRefType::get({kFaultWords}, b.getI64Type());
    memref::GlobalOp::create(b, module.getLoc(), kFaultSymbol, b.getStringAttr("public"), recordType,
                             DenseElementsAttr::get(RankedTensorType::get({kFaultWords}, b.getI64Type()),
                                                    ArrayRef<Attribute>{b.getI64IntegerAttr(0)}),
                             /*constant=*/false, b.getI64IntegerAttr(8));
    for (auto gfn : gpuModule.getOps<gpu::GPUFuncOp>()) {
      // A warp's tensor-core op as what one lane of it computes (WarpMma.h).
      SmallVector<WarpMmaOp> mmas;
      gfn.walk([&](WarpMmaOp op) { mmas.push_back(op); });
      IRRewriter rewriter(b);
      for (WarpMmaOp op : mmas)
        lowerWarpMmaToDotProducts(rewriter, op);
      if (failed(synchronousCopies(gfn)))
        return signalPassFailure();
      auto blocks = gfn->getAttrOfType<IntegerAttr>(kCudaWorkgroupsAttrName);
      auto threads = gfn->getAttrOfType<IntegerAttr>(kCudaWorkgroupSizeAttrName);
      if (!blocks || !threads) {
        gfn.emitError("a CUDA kernel without its launch shape");
        return signalPassFailure();
      }
      Location loc = gfn.getLoc();
      b.setInsertionPointToEnd(module.getBody());
      auto fn = func::FuncOp::create(b, loc, gfn.getName(), gfn.getFunctionType());
      fn->setAttr(kWorkgroupsAttrName, blocks);
      Block *entry = fn.addEntryBlock();
      b.setInsertionPointToStart(entry);
      IRMapping map;
      for (auto [from, to] : llvm::zip(gfn.getArguments(), fn.getArguments()))
        map.map(from, to);
      Block &body = gfn.getBody().front();
      AlignmentChecks checks;
      checks.kernel = gfn.getName();
      for (auto [number, arg] : llvm::enumerate(fn.getArguments()))
        checks.buffers[arg] = {kGlobal, static_cast<int64_t>(number), kBindingAlignment};
      if (gfn->hasAttr(kCudaStagedAttrName)) {
        if (failed(emulateStaged(b, gfn, fn, map, threads.getInt(), checks)))
          return signalPassFailure();
        continue;
      }
      // A thread's temporaries: one frame, reused by every emulated thread.
      Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
      Value blockId = beginBlockLoop(b, loc, body, map, checks);
      Value threadCount = arith::ConstantIndexOp::create(b, loc, threads.getInt());
      auto threadLoop = scf::ForOp::create(b, loc, zero, threadCount, one);
      b.setInsertionPointToStart(threadLoop.getBody());
      Value threadId = ordered(b, loc, threadLoop.getInductionVar(), zero, threadCount);
      checks.block = blockId;
      checks.thread = [threadId](OpBuilder &, Operation *) { return threadId; };
      if (failed(cloneBody(b, body, map, blockId, threadId, /*staged=*/false, checks)))
        return signalPassFailure();
      b.setInsertionPointToEnd(entry);
      func::ReturnOp::create(b, loc);
    }
    gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace

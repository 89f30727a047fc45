//===- CheckSharedMemory.cpp - a CUDA kernel's shared memory against its space --===//
#include "Target/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_CHECKSHAREDMEMORY
#include "Target/Cuda/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// What a block may declare statically (`.shared` in the PTX); more needs dynamic shared memory
// and a launch attribute, which the runtime does not set.
constexpr uint64_t kStaticSharedBytesPerBlock = 48 * 1024;

uint64_t bytesOf(MemRefType type) {
  return static_cast<uint64_t>(type.getNumElements()) * ((type.getElementTypeBitWidth() + 7) / 8);
}

bool isShared(MemRefType type) { return gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type); }

struct CheckSharedMemoryPass : public mlir::hexir::impl::CheckSharedMemoryBase<CheckSharedMemoryPass> {
  using CheckSharedMemoryBase::CheckSharedMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModuleName);
    if (!gpuModule)
      return;
    uint64_t limit = capacity > 0 ? std::min<uint64_t>(capacity, kStaticSharedBytesPerBlock) : kStaticSharedBytesPerBlock;
    for (auto fn : gpuModule.getOps<gpu::GPUFuncOp>()) {
      uint64_t bytes = 0;
      bool staticShapes = true;
      // Each buffer's declared alignment, where it has one.
      SmallVector<std::optional<uint64_t>> alignments;
      for (auto [index, arg] : llvm::enumerate(fn.getWorkgroupAttributions())) {
        auto type = cast<MemRefType>(arg.getType());
        staticShapes &= type.hasStaticShape();
        bytes += type.hasStaticShape() ? bytesOf(type) : 0;
        auto align = dyn_cast_or_null<IntegerAttr>(
            fn.getWorkgroupAttributionAttr(index, LLVM::LLVMDialect::getAlignAttrName()));
        alignments.push_back(align ? std::optional<uint64_t>(align.getInt()) : std::nullopt);
      }
      llvm::SmallPtrSet<Operation *, 4> globals;
      fn.walk([&](Operation *op) {
        if (auto alloca = dyn_cast<memref::AllocaOp>(op); alloca && isShared(alloca.getType())) {
          staticShapes &= alloca.getType().hasStaticShape();
          bytes += alloca.getType().hasStaticShape() ? bytesOf(alloca.getType()) : 0;
          alignments.push_back(alloca.getAlignment());
        } else if (auto get = dyn_cast<memref::GetGlobalOp>(op); get && isShared(get.getType())) {
          auto global = dyn_cast_or_null<memref::GlobalOp>(SymbolTable::lookupNearestSymbolFrom(fn, get.getNameAttr()));
          if (global && globals.insert(global).second) {
            bytes += bytesOf(get.getType());
            alignments.push_back(global.getAlignment());
          }
        }
      });
      fn->setAttr("hexir.shared_bytes", IntegerAttr::get(IntegerType::get(fn.getContext(), 64), bytes));
      if (!staticShapes) {
        fn.emitError() << "kernel '" << fn.getName() << "' declares shared memory of a dynamic size";
        return signalPassFailure();
      }
      // LLVM vectorizes accesses to a large shared array as if it were 16-byte aligned; the
      // PTX declares what the buffer says, the element's alignment if it says nothing.
      if (llvm::any_of(alignments, [](std::optional<uint64_t> a) {
            return !a || *a < static_cast<uint64_t>(kCudaSharedAlignment);
          })) {
        fn.emitError() << "internal error: kernel '" << fn.getName() << "' declares shared memory without a "
                       << kCudaSharedAlignment << "-byte alignment";
        return signalPassFailure();
      }
      if (bytes <= limit)
        continue;
      InFlightDiagnostic diag = fn.emitError();
      diag << "kernel '" << fn.getName() << "' needs " << bytes << " bytes of shared memory per block, over the "
           << limit << " bytes ";
      if (capacity > 0 && capacity < kStaticSharedBytesPerBlock)
        diag << "of the machine's shared memory space";
      else
        diag << "a CUDA block may declare statically";
      return signalPassFailure();
    }
  }
};

} // namespace

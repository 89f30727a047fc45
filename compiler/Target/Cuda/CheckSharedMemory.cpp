//===- CheckSharedMemory.cpp - a CUDA kernel's shared memory against its space --===//
#include "Target/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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
      for (BlockArgument arg : fn.getWorkgroupAttributions()) {
        auto type = cast<MemRefType>(arg.getType());
        staticShapes &= type.hasStaticShape();
        bytes += type.hasStaticShape() ? bytesOf(type) : 0;
      }
      llvm::SmallPtrSet<Operation *, 4> globals;
      fn.walk([&](Operation *op) {
        if (auto alloca = dyn_cast<memref::AllocaOp>(op); alloca && isShared(alloca.getType())) {
          staticShapes &= alloca.getType().hasStaticShape();
          bytes += alloca.getType().hasStaticShape() ? bytesOf(alloca.getType()) : 0;
        } else if (auto get = dyn_cast<memref::GetGlobalOp>(op); get && isShared(get.getType())) {
          if (Operation *global = SymbolTable::lookupNearestSymbolFrom(fn, get.getNameAttr());
              global && globals.insert(global).second)
            bytes += bytesOf(get.getType());
        }
      });
      fn->setAttr("hexir.shared_bytes", IntegerAttr::get(IntegerType::get(fn.getContext(), 64), bytes));
      if (!staticShapes) {
        fn.emitError() << "kernel '" << fn.getName() << "' declares shared memory of a dynamic size";
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

//===- Registration.cpp - dialects the compiler understands ---------------===//
#include "Driver/Registration.h"

#include "Dialect/HexirDialect.h"
#include "Target/Cuda/Passes.h"
#include "Target/Host/Passes.h"
#include "Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

void mlir::hexir::registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<HexirDialect>();
  // All upstream dialects and their external models: bufferization of tensor/linalg/arith,
  // ConvertToLLVM interfaces, allocation-op interfaces (without which promote-buffers-to-stack
  // leaves malloc in kernels).
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // The CUDA target: gpu.module -> LLVM IR -> PTX.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::hexir::registerCompilerPasses() {
  registerAllPasses();
  registerHexirPasses();
  registerHexirPipelines();
  registerHostPassesAndPipelines();
  registerCudaPassesAndPipelines();
}

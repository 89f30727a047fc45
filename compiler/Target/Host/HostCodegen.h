//===- HostCodegen.h - kernels to a host shared object ---------*- C++ -*-===//
//
// Host code generation in three steps, one file each:
//   lowerKernelsToLLVMDialect  kernel func.func ops on tensors -> LLVM dialect (bare pointers)
//   emitHostObject             LLVM IR with exported entry wrappers -> optimized PIC object
//   linkSharedObject           object -> ELF shared object bytes (ld.lld, no libc needed)
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_CODEGEN_HOSTCODEGEN_H
#define HEXIR_COMPILER_CODEGEN_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include "Target/Host/Passes.h"
#include "Target/TargetRegistry.h"
#include "serializer/executable_spec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::hexir {

// One exported kernel entry: `void name(void* const* bindings, uint32_t wg_begin,
// uint32_t wg_end)` with `arity` bindings (inputs, then outputs).
struct KernelInfo {
  std::string name;
  unsigned arity = 0;
  unsigned workgroups = 1;  // independent workgroups (DistributeWorkgroups)
  unsigned stackBytes = 0;  // bytes of stack buffers (CheckKernelStack)
  std::vector<uint64_t> bindingBytes;  // bytes of each binding's tensor
};

struct HostTargetOptions {
  std::string cpu = "host";  // an LLVM CPU name, or "host" for this machine's CPU and features
  std::string linkerPath;    // ld.lld
  // Link with the lld library inside this process (when the build has it) instead of running
  // `linkerPath`: no process to start, which is most of a small graph's compile time. Off
  // when the user names a linker.
  bool inProcessLinker = false;
};

// The host code generator's options from the command line's (the default linker if none).
HostTargetOptions hostTargetOptions(const TargetOptions &options);
// What the kernel pipeline needs to know of the target CPU: the width of its vector registers
// (512 with AVX-512, 256 with AVX, else 128) and whether it has FMA.
FailureOr<KernelPipelineOptions> describeHostTarget(const HostTargetOptions &options, Location loc);

// Clones every kernel (func.func marked hexir.kernel) of `module` into parts (modules nested in
// a new module, fixed by the kernels alone) and lowers them to the LLVM dialect, the parts in
// parallel. `kernels` receives each kernel's name, arity, workgroups and stack bytes.
FailureOr<OwningOpRef<ModuleOp>> lowerKernelsToLLVMDialect(ModuleOp module,
                                                           SmallVectorImpl<KernelInfo> &kernels,
                                                           const KernelPipelineOptions &options);

struct HostObject {
  // One relocatable object per part of the kernels (lowerKernelsToLLVMDialect), in order.
  std::vector<std::vector<char>> objects;
  // The instruction-set extensions the code may use (from a fixed list the runtime can test,
  // such as "avx2" or "avx512f"): a CPU without one of them must refuse the kernels.
  std::vector<std::string> cpuFeatures;
};

// Translates an LLVM-dialect kernel module to LLVM IR, adds the exported entry wrappers,
// optimizes at O3 for the target CPU and emits a PIC object: one per nested module (a part),
// in parallel, or one for the whole module if it has none. Fails if an object needs any
// external symbol other than memcpy/memset/memmove.
FailureOr<HostObject> emitHostObject(ModuleOp llvmModule, ArrayRef<KernelInfo> kernels,
                                     const HostTargetOptions &options);

// Links relocatable objects into one shared object with ld.lld, in temporary files that are
// always removed.
FailureOr<std::vector<uint8_t>> linkSharedObject(ArrayRef<std::vector<char>> objects, Location loc,
                                                 const HostTargetOptions &options);
// The last two steps together: an LLVM-dialect kernel module as a host ELF kernel library
// (code, entries, CPU extensions).
FailureOr<::hexir::serializer::KernelLibrary> packageHostKernels(ModuleOp llvmModule, ArrayRef<KernelInfo> kernels,
                                                                 const HostTargetOptions &options, Location loc);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_CODEGEN_HOSTCODEGEN_H

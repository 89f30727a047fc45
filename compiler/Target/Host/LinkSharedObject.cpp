//===- LinkSharedObject.cpp - object to shared object with ld.lld ---------===//
#include "Target/Host/HostCodegen.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

FailureOr<std::vector<uint8_t>> mlir::hexir::linkSharedObject(ArrayRef<char> object, Location loc,
                                                              const HostTargetOptions &options) {
  llvm::SmallString<128> objPath, soPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("hexir-kernels", "o", objPath) ||
      llvm::sys::fs::createTemporaryFile("hexir-kernels", "so", soPath) ||
      llvm::sys::fs::createTemporaryFile("hexir-link", "log", logPath))
    return emitError(loc) << "cannot create temporary files for linking the kernels";
  // Removed on every path out of this function.
  llvm::FileRemover removeObj(objPath), removeSo(soPath), removeLog(logPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return emitError(loc) << "cannot write '" << objPath << "': " << ec.message();
    os.write(object.data(), object.size());
  }
  std::string linker = options.linkerPath;
  if (!llvm::sys::fs::can_execute(linker))
    return emitError(loc) << "linker '" << linker
                          << "' not found; install lld-22 or pass --linker PATH";
  // No libc: kernels reference at most memcpy/memset/memmove, which the loading process has.
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared", "--hash-style=gnu",
                                             "-z", "noexecstack", "--build-id=none",
                                             "-soname", "hexir_kernels.so", "-o",
                                             soPath, objPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0, 0, &error);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return emitError(loc) << "linking the kernels failed (" << (error.empty() ? "exit " + std::to_string(rc) : error)
                          << "): " << (log ? (*log)->getBuffer().str() : std::string());
  }
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!so)
    return emitError(loc) << "cannot read the linked kernels: " << so.getError().message();
  llvm::StringRef bytes = (*so)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

FailureOr<::hexir::serializer::KernelLibrary> mlir::hexir::packageHostKernels(ModuleOp llvmModule,
                                                                           ArrayRef<KernelInfo> kernels,
                                                                           const HostTargetOptions &options,
                                                                           Location loc) {
  auto object = emitHostObject(llvmModule, kernels, options);
  if (failed(object))
    return failure();
  auto sharedObject = linkSharedObject(object->object, loc, options);
  if (failed(sharedObject))
    return failure();
  ::hexir::serializer::KernelLibrary library;
  library.format = ::hexir::serializer::KernelFormat::HostElf;
  library.code = std::move(*sharedObject);
  library.cpu_features = object->cpuFeatures;
  for (const KernelInfo &k : kernels)
    library.entries.push_back({k.name, k.arity, k.workgroups, k.stackBytes, k.bindingBytes});
  return library;
}

//===- LinkSharedObject.cpp - object to shared object with ld.lld ---------===//
//
// The kernels' object becomes an ELF shared object (what the runtime dlopens) through lld:
// its library, inside this process, where the build has it (HEXIR_LLD_IN_PROCESS), else the
// ld.lld program. Starting ld.lld costs about 50 ms of CPU (it loads libLLVM and resolves its
// symbols), more than linking a small graph's kernels takes.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/HostCodegen.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#if HEXIR_LLD_IN_PROCESS
#include "lld/Common/Driver.h"

#include <atomic>
#include <mutex>
#include <thread>
LLD_HAS_DRIVER(elf)
#endif

using namespace mlir;

namespace {

#if HEXIR_LLD_IN_PROCESS
// lld's library keeps global state: one link at a time in a process. After a link it cannot
// recover from (it says so), later links run the ld.lld program instead.
std::mutex lldMutex;
std::atomic<bool> lldUsable{true};

// Links with the lld library; nullopt when it cannot be used (then the caller runs ld.lld).
std::optional<int> linkInProcess(ArrayRef<llvm::StringRef> args, std::string &log) {
  if (!lldUsable.load())
    return std::nullopt;
  std::vector<std::string> owned(args.begin(), args.end());
  std::vector<const char *> argv;
  for (const std::string &a : owned)
    argv.push_back(a.c_str());
  std::lock_guard<std::mutex> lock(lldMutex);
  llvm::raw_string_ostream out(log);
  // On a thread of its own: lld keeps some allocators per thread (makeThreadLocal) that a link
  // does not free and a thread's end does (leak_bench, 800 compiles: RSS +4.7 KiB a compile on
  // the caller's thread, +0.26 KiB with a thread per link).
  lld::Result result{1, false};
  std::thread([&] { result = lld::lldMain(argv, out, out, {{lld::Gnu, &lld::elf::link}}); }).join();
  if (!result.canRunAgain)
    lldUsable.store(false);
  return result.retCode;
}
#endif

} // namespace

FailureOr<std::vector<uint8_t>> mlir::hexir::linkSharedObject(ArrayRef<std::vector<char>> objects, Location loc,
                                                              const HostTargetOptions &options) {
  llvm::SmallString<128> soPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("hexir-kernels", "so", soPath) ||
      llvm::sys::fs::createTemporaryFile("hexir-link", "log", logPath))
    return emitError(loc) << "cannot create temporary files for linking the kernels";
  // Removed on every path out of this function.
  llvm::FileRemover removeSo(soPath), removeLog(logPath);
  std::vector<llvm::SmallString<128>> objPaths(objects.size());
  std::vector<std::unique_ptr<llvm::FileRemover>> removeObjs;
  for (auto [object, objPath] : llvm::zip_equal(objects, objPaths)) {
    if (llvm::sys::fs::createTemporaryFile("hexir-kernels", "o", objPath))
      return emitError(loc) << "cannot create temporary files for linking the kernels";
    removeObjs.push_back(std::make_unique<llvm::FileRemover>(objPath));
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return emitError(loc) << "cannot write '" << objPath << "': " << ec.message();
    os.write(object.data(), object.size());
  }
  std::string linker = options.linkerPath;
  // No libc: kernels reference at most memcpy/memset/memmove, which the loading process has.
  // One thread: a kernel library is a few small objects, and lld's worker threads would each
  // keep a malloc arena of their own in the compiler's process.
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared", "--hash-style=gnu",
                                             "-z", "noexecstack", "--build-id=none",
                                             "--threads=1", "-soname", "hexir_kernels.so",
                                             "-o", soPath};
  for (const llvm::SmallString<128> &objPath : objPaths)
    args.push_back(objPath);
  std::optional<int> rc;
  std::string error, log;
#if HEXIR_LLD_IN_PROCESS
  if (options.inProcessLinker)
    rc = linkInProcess(args, log);
#endif
  if (!rc) {
    if (!llvm::sys::fs::can_execute(linker))
      return emitError(loc) << "linker '" << linker << "' not found; install lld-22 or pass --linker PATH";
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath),
                                                  llvm::StringRef(logPath)};
    rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0, 0, &error);
    if (auto file = llvm::MemoryBuffer::getFile(logPath))
      log = (*file)->getBuffer().str();
  }
  if (*rc != 0)
    return emitError(loc) << "linking the kernels failed (" << (error.empty() ? "exit " + std::to_string(*rc) : error)
                          << "): " << log;
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
  auto sharedObject = linkSharedObject(object->objects, loc, options);
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

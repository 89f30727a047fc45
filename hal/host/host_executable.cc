#include "hal/host/host_executable.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hexir::hal {

StatusOr<std::unique_ptr<HostExecutable>> HostExecutable::Load(
    ByteSpan elf, const std::vector<std::string>& entry_names) {
  static const unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (elf.size() < 64 || std::memcmp(elf.data(), kElfMagic, 4) != 0)
    return DataLossError("host kernel library is not an ELF shared object (", elf.size(), " bytes)");
  int fd = ::memfd_create("hexir-kernels", MFD_CLOEXEC);
  if (fd < 0) return FailedPreconditionError("memfd_create failed: ", std::strerror(errno));
  size_t written = 0;
  while (written < elf.size()) {
    ssize_t n = ::write(fd, elf.data() + written, elf.size() - written);
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      return ResourceExhaustedError("writing the kernel library to a memfd failed: ", std::strerror(err));
    }
    written += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  // The memfd stays open while the library is loaded: the dynamic loader knows a library by its
  // path, and a closed descriptor's number comes back for the next load, whose
  // "/proc/self/fd/N" would then name the library already loaded (two models in one process
  // would share the first one's kernels).
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ::close(fd);
    const char* err = ::dlerror();
    return DataLossError("cannot load the host kernel library: ", err ? err : "unknown dlopen error");
  }
  std::vector<HostKernelFn> entries;
  entries.reserve(entry_names.size());
  for (const std::string& name : entry_names) {
    void* sym = ::dlsym(handle, name.c_str());
    if (sym == nullptr) {
      ::dlclose(handle);
      ::close(fd);
      return NotFoundError("kernel '", name, "' is missing from the host kernel library");
    }
    entries.push_back(reinterpret_cast<HostKernelFn>(sym));
  }
  auto* fault = static_cast<HostKernelFault*>(::dlsym(handle, kHostKernelFaultSymbol));
  return std::unique_ptr<HostExecutable>(new HostExecutable(handle, fd, std::move(entries), entry_names, fault));
}

HostExecutable::~HostExecutable() {
  ::dlclose(handle_);
  ::close(fd_);
}

}  // namespace hexir::hal

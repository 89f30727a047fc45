// HostExecutable: an ELF shared object loaded from a byte range, without touching the file
// system: the bytes go into an anonymous memfd that dlopen maps through /proc/self/fd.
//
// Ownership: owns the dlopen handle and the memfd; dlclose and close on destruction. Thread safety: immutable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hal/executable.h"

namespace hexir::hal {

class HostExecutable final : public Executable {
 public:
  static StatusOr<std::unique_ptr<HostExecutable>> Load(ByteSpan elf,
                                                        const std::vector<std::string>& entry_names);
  ~HostExecutable() override;

  uint32_t entry_count() const override { return static_cast<uint32_t>(entries_.size()); }
  HostKernelFn entry(uint32_t index) const { return entries_[index]; }
  const std::string& entry_name(uint32_t index) const { return names_[index]; }
  // The library's fault record (kHostKernelFaultSymbol), or nullptr where it has none.
  HostKernelFault* fault() const { return fault_; }

 private:
  HostExecutable(void* handle, int fd, std::vector<HostKernelFn> entries, std::vector<std::string> names,
                 HostKernelFault* fault)
      : handle_(handle), fd_(fd), entries_(std::move(entries)), names_(std::move(names)), fault_(fault) {}
  void* handle_;
  int fd_;  // the memfd the library was loaded from, open while it is loaded (see Load)
  std::vector<HostKernelFn> entries_;
  std::vector<std::string> names_;
  HostKernelFault* fault_;
};

}  // namespace hexir::hal

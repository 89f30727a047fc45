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

 private:
  HostExecutable(void* handle, int fd, std::vector<HostKernelFn> entries)
      : handle_(handle), fd_(fd), entries_(std::move(entries)) {}
  void* handle_;
  int fd_;  // the memfd the library was loaded from, open while it is loaded (see Load)
  std::vector<HostKernelFn> entries_;
};

}  // namespace hexir::hal

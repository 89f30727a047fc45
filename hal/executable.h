// hal::Executable: kernels loaded onto a device, addressed by entry index.
//
// Ownership: made by Device::LoadExecutable and owned by the caller (a vm::Module); it must be
// destroyed before its device. Thread safety: immutable after loading; dispatching the same
// executable from several threads is safe.
#pragma once

#include <cstdint>

namespace hexir::hal {

// Host kernel ABI: bindings are base pointers already offset into the arena, the constant pool
// or the caller's tensors (inputs first, then outputs); the kernel computes workgroups
// [wg_begin, wg_end) of its dispatch, so a host backend can split a dispatch across threads.
using HostKernelFn = void (*)(void* const* bindings, uint32_t wg_begin, uint32_t wg_end);

enum class ExecutableFormat {
  kHostElf,  // an ELF shared object for the host CPU
  kCudaPtx,  // PTX text
};

class Executable {
 public:
  virtual ~Executable() = default;
  virtual uint32_t entry_count() const = 0;
};

}  // namespace hexir::hal

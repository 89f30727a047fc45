// hal::Executable: kernels loaded onto a device, addressed by entry index, and what loading
// one takes (ExecutableSource): code in a format, entry names, and requirements the device
// checks before it runs anything (a host library built for CPU extensions this CPU lacks
// would crash on its first such instruction).
//
// Ownership: made by Device::LoadExecutable and owned by the caller (a vm::Module); it must be
// destroyed before its device. Thread safety: immutable after loading; dispatching the same
// executable from several threads is safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hexir/span.h"

namespace hexir::hal {

// Host kernel ABI: bindings are base pointers already offset into the arena, the constant pool
// or the caller's tensors (inputs first, then outputs); the kernel computes workgroups
// [wg_begin, wg_end) of its dispatch, so a host backend can split a dispatch across threads.
using HostKernelFn = void (*)(void* const* bindings, uint32_t wg_begin, uint32_t wg_end);

// A host kernel library may define a fault record under this name, which its kernels write when
// a check of theirs fails: the cuda-emulator target's kernels check the alignment of every vector
// access as a GPU would. The host queue reports a recorded fault as the dispatch's error and
// clears it. Kernels of one library running at once may overwrite each other's record; one of
// the faults is reported.
inline constexpr const char kHostKernelFaultSymbol[] = "hexir_kernel_fault";
struct HostKernelFault {
  enum Kind : uint64_t { kNone = 0, kMisalignedLoad = 1, kMisalignedStore = 2 };
  // PTX's state spaces: the buffer a faulting access was into.
  enum Space : uint64_t { kGlobal = 1, kShared = 3, kLocal = 5 };
  uint64_t kind;
  uint64_t space;
  uint64_t buffer;  // the binding (global) or the shared buffer's number; 0 for local memory
  uint64_t offset;  // bytes from the start of that buffer
  uint64_t bytes;   // the access's size
  uint64_t alignment;  // what the GPU needs of its address
  uint64_t block;
  uint64_t thread;
};

enum class ExecutableFormat {
  kHostElf,  // an ELF shared object for the host CPU
  kCudaPtx,  // PTX text
};

const char* ExecutableFormatName(ExecutableFormat format);

struct ExecutableSource {
  ExecutableFormat format = ExecutableFormat::kHostElf;
  ByteSpan code;                          // must outlive the load only
  std::vector<std::string> entry_names;   // resolved in order: entry i is entry_names[i]
  // Host code: instruction-set extensions it was compiled for (LLVM's names: "avx2", ...).
  std::vector<std::string> cpu_features;
  // CUDA code: the compute capability it needs, major * 10 + minor (0: none).
  uint32_t compute_capability = 0;
  // Per entry: invocations per workgroup, x, y, z (a GPU's block; host kernels: 1, 1, 1). Empty:
  // 1, 1, 1 for every entry.
  std::vector<std::array<uint32_t, 3>> workgroup_sizes;
};

class Executable {
 public:
  virtual ~Executable() = default;
  virtual uint32_t entry_count() const = 0;
};

}  // namespace hexir::hal

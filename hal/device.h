// hal::Device: one compute device (the host CPU, a CUDA GPU) seen through the few operations
// the VM needs: allocate device memory, load executables, dispatch kernels, fill and copy.
//
// Device memory is addressed by DevicePtr; on the host it is an ordinary pointer. Operations
// are issued in order; Synchronize() waits for all of them (a no-op on the host, whose
// operations complete before they return).
//
// Ownership: buffers from Allocate must be returned with Free (with their size) before the
// device is destroyed; a device destroyed with live buffers reports them on stderr.
// Thread safety: Allocate/Free/LoadExecutable are thread-safe; Dispatch/Fill/Copy may be called
// from several threads on disjoint memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hal/executable.h"

namespace hexir::hal {

using DevicePtr = void*;

struct Workgroups {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t total() const { return uint64_t{x} * y * z; }
};

class Device {
 public:
  virtual ~Device() = default;

  // "host", "cuda:0", ...
  virtual std::string name() const = 0;
  // Whether executables may place arenas or constants in the memory space named `name` (the
  // names a compiler target gives its spaces: "host").
  virtual bool HasMemorySpace(const std::string& name) const = 0;

  // Device memory of `bytes` bytes aligned to `alignment` (a power of two). Every buffer is
  // counted until it is freed: live_buffers() and live_bytes() report what is outstanding.
  StatusOr<DevicePtr> Allocate(uint64_t bytes, uint64_t alignment);
  void Free(DevicePtr ptr, uint64_t bytes);
  uint64_t live_buffers() const { return live_buffers_.load(); }
  uint64_t live_bytes() const { return live_bytes_.load(); }
  uint64_t total_allocations() const { return total_allocations_.load(); }

  // Loads kernels from `code` and resolves `entry_names`; NOT_FOUND names a missing entry.
  virtual StatusOr<std::unique_ptr<Executable>> LoadExecutable(
      ExecutableFormat format, ByteSpan code, const std::vector<std::string>& entry_names) = 0;

  // Runs entry `entry` of `executable` over `workgroups` with `bindings` (device pointers).
  virtual Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                          Span<const DevicePtr> bindings) = 0;
  // Fills `length` bytes at `target` with a repeating `pattern_length`-byte pattern.
  virtual Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) = 0;
  virtual Status Copy(DevicePtr target, const void* source, uint64_t length) = 0;
  virtual Status Synchronize() = 0;

 protected:
  virtual StatusOr<DevicePtr> DoAllocate(uint64_t bytes, uint64_t alignment) = 0;
  virtual void DoFree(DevicePtr ptr) = 0;
  // Backends call this from their destructor: reports buffers never freed.
  void ReportLeaks() const;

 private:
  std::atomic<uint64_t> live_buffers_{0}, live_bytes_{0}, total_allocations_{0};
};

}  // namespace hexir::hal

// hal::Allocator: a device's memory, by memory space. Each space has the name a compiler target
// gives it ("host"; "device" on a GPU), so an executable's arenas find theirs by name. Every
// buffer is counted until it is destroyed: live_buffers() and live_bytes() report what is
// outstanding, and CheckNoLeaks() says so as a Status.
//
// Ownership: owned by its device. Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hexir/status.h"
#include "hal/buffer.h"

namespace hexir::hal {

struct MemorySpaceInfo {
  std::string name;          // "host", "device"
  bool host_visible = true;  // the CPU may read and write it through a DevicePtr
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  virtual const std::vector<MemorySpaceInfo>& memory_spaces() const = 0;
  // The index of the space named `name`, if the device has one.
  std::optional<uint32_t> FindMemorySpace(const std::string& name) const;

  // What memory space `space` has free now, as the device reports it (host: the kernel's
  // MemAvailable; a GPU: its free memory). INVALID_ARGUMENT for an unknown space.
  virtual StatusOr<uint64_t> AvailableBytes(uint32_t space) const = 0;

  // `bytes` bytes of memory space `space` aligned to `alignment` (a power of two).
  // INVALID_ARGUMENT for an unknown space or a bad alignment; RESOURCE_EXHAUSTED when full.
  StatusOr<BufferPtr> Allocate(uint32_t space, uint64_t bytes, uint64_t alignment);

  uint64_t live_buffers() const { return live_buffers_.load(); }
  uint64_t live_bytes() const { return live_bytes_.load(); }
  uint64_t total_allocations() const { return total_allocations_.load(); }
  // OK when every buffer has been destroyed; else FAILED_PRECONDITION naming what is left.
  Status CheckNoLeaks(const std::string& device_name) const;

 protected:
  virtual StatusOr<DevicePtr> DoAllocate(uint32_t space, uint64_t bytes, uint64_t alignment) = 0;
  virtual void DoFree(uint32_t space, DevicePtr data, uint64_t bytes) = 0;

 private:
  friend class Buffer;
  void Release(const Buffer& buffer);
  std::atomic<uint64_t> live_buffers_{0}, live_bytes_{0}, total_allocations_{0};
};

}  // namespace hexir::hal

// The host backend's memory: one memory space, "host" (process memory), from aligned_alloc.
// Thread safety: thread-safe.
#pragma once

#include "hal/allocator.h"

namespace hexir::hal {

class HostAllocator final : public Allocator {
 public:
  HostAllocator();
  const std::vector<MemorySpaceInfo>& memory_spaces() const override { return spaces_; }
  StatusOr<uint64_t> AvailableBytes(uint32_t space) const override;

 protected:
  StatusOr<DevicePtr> DoAllocate(uint32_t space, uint64_t bytes, uint64_t alignment) override;
  void DoFree(uint32_t space, DevicePtr data, uint64_t bytes) override;

 private:
  std::vector<MemorySpaceInfo> spaces_;
};

}  // namespace hexir::hal

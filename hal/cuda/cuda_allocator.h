// The CUDA backend's memory: one memory space, "device" (the GPU's global memory, which the
// CPU cannot address), from cuMemAlloc. cuMemAlloc aligns to 256 bytes; a larger alignment is
// met by allocating more and aligning up inside.
// Thread safety: thread-safe.
#pragma once

#include <mutex>
#include <unordered_map>

#include "hal/allocator.h"
#include "hal/cuda/cuda_context.h"

namespace hexir::hal::cuda {

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(const CudaContext& context);
  const std::vector<MemorySpaceInfo>& memory_spaces() const override { return spaces_; }
  StatusOr<uint64_t> AvailableBytes(uint32_t space) const override;

 protected:
  StatusOr<DevicePtr> DoAllocate(uint32_t space, uint64_t bytes, uint64_t alignment) override;
  void DoFree(uint32_t space, DevicePtr data, uint64_t bytes) override;

 private:
  const CudaContext& context_;
  std::vector<MemorySpaceInfo> spaces_;
  std::mutex mu_;
  std::unordered_map<CUdeviceptr, CUdeviceptr> base_of_;  // aligned address -> cuMemAlloc's
};

}  // namespace hexir::hal::cuda

#include "hal/host/host_allocator.h"

#include <cstdlib>

#include "base/alignment.h"

namespace hexir::hal {

HostAllocator::HostAllocator() : spaces_{{"host", /*host_visible=*/true}} {}

StatusOr<DevicePtr> HostAllocator::DoAllocate(uint32_t, uint64_t bytes, uint64_t alignment) {
  alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
  void* p = std::aligned_alloc(alignment, AlignUp(bytes == 0 ? 1 : bytes, alignment));
  if (p == nullptr) return ResourceExhaustedError("host allocation of ", bytes, " bytes failed");
  return p;
}

void HostAllocator::DoFree(uint32_t, DevicePtr data, uint64_t) { std::free(data); }

}  // namespace hexir::hal

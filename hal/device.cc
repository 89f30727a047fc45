#include "hal/device.h"

#include <cstdio>

namespace hexir::hal {

StatusOr<DevicePtr> Device::Allocate(uint64_t bytes, uint64_t alignment) {
  HEXIR_ASSIGN_OR_RETURN(DevicePtr p, DoAllocate(bytes, alignment));
  live_buffers_.fetch_add(1);
  live_bytes_.fetch_add(bytes);
  total_allocations_.fetch_add(1);
  return p;
}

void Device::Free(DevicePtr ptr, uint64_t bytes) {
  if (ptr == nullptr) return;
  DoFree(ptr);
  live_buffers_.fetch_sub(1);
  live_bytes_.fetch_sub(bytes);
}

void Device::ReportLeaks() const {
  if (live_buffers_.load() != 0)
    std::fprintf(stderr, "hexir: device '%s' destroyed with %llu live buffers (%llu bytes)\n", name().c_str(),
                 static_cast<unsigned long long>(live_buffers_.load()),
                 static_cast<unsigned long long>(live_bytes_.load()));
}

}  // namespace hexir::hal

#include "hal/host/host_allocator.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/alignment.h"

namespace hexir::hal {

HostAllocator::HostAllocator() : spaces_{{"host", /*host_visible=*/true}} {}

StatusOr<DevicePtr> HostAllocator::DoAllocate(uint32_t, uint64_t bytes, uint64_t alignment) {
  alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
  void* p = std::aligned_alloc(alignment, AlignUp(bytes == 0 ? 1 : bytes, alignment));
  if (p == nullptr) return ResourceExhaustedError("host allocation of ", bytes, " bytes failed");
  return p;
}

StatusOr<uint64_t> HostAllocator::AvailableBytes(uint32_t space) const {
  if (space >= spaces_.size()) return InvalidArgumentError("memory space ", space, " does not exist on the host");
  // MemAvailable: what can be allocated without swapping (free plus reclaimable caches).
  if (FILE* f = std::fopen("/proc/meminfo", "re")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof(line), f) != nullptr)
      found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages < 0 || page < 0) return InternalError("the host reports no free memory figure");
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

void HostAllocator::DoFree(uint32_t, DevicePtr data, uint64_t) { std::free(data); }

}  // namespace hexir::hal

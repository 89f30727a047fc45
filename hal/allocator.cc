#include "hal/allocator.h"

#include "base/alignment.h"

namespace hexir::hal {

std::unique_ptr<Buffer> Buffer::Borrow(DevicePtr data, uint64_t size, uint32_t memory_space) {
  return std::unique_ptr<Buffer>(new Buffer(nullptr, data, size, memory_space));
}

Buffer::~Buffer() {
  if (owner_ != nullptr) owner_->Release(*this);
}

std::optional<uint32_t> Allocator::FindMemorySpace(const std::string& name) const {
  const std::vector<MemorySpaceInfo>& spaces = memory_spaces();
  for (uint32_t i = 0; i < spaces.size(); ++i)
    if (spaces[i].name == name) return i;
  return std::nullopt;
}

StatusOr<BufferPtr> Allocator::Allocate(uint32_t space, uint64_t bytes, uint64_t alignment) {
  if (space >= memory_spaces().size())
    return InvalidArgumentError("memory space ", space, " does not exist (the device has ", memory_spaces().size(),
                                ")");
  if (!IsPowerOfTwo(alignment)) return InvalidArgumentError("alignment ", alignment, " is not a power of two");
  HEXIR_ASSIGN_OR_RETURN(DevicePtr data, DoAllocate(space, bytes, alignment));
  live_buffers_.fetch_add(1);
  live_bytes_.fetch_add(bytes);
  total_allocations_.fetch_add(1);
  return BufferPtr(new Buffer(this, data, bytes, space));
}

void Allocator::Release(const Buffer& buffer) {
  DoFree(buffer.memory_space(), buffer.data(), buffer.size());
  live_buffers_.fetch_sub(1);
  live_bytes_.fetch_sub(buffer.size());
}

Status Allocator::CheckNoLeaks(const std::string& device_name) const {
  if (live_buffers_.load() == 0) return Status::Ok();
  return FailedPreconditionError("device '", device_name, "' destroyed with ", live_buffers_.load(),
                                 " live buffers (", live_bytes_.load(), " bytes)");
}

}  // namespace hexir::hal

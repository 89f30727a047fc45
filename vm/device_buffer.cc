#include "hexir/device_buffer.h"

#include "hal/device.h"

namespace hexir {

struct DeviceBuffer::Impl {
  hal::Device* device = nullptr;
  hal::BufferPtr buffer;
};

namespace {

Status CheckRange(uint64_t size, uint64_t bytes, uint64_t offset, const char* what) {
  if (offset > size || bytes > size - offset)
    return OutOfRangeError(what, " of ", bytes, " bytes at offset ", offset, " is outside the device buffer of ", size,
                           " bytes");
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<DeviceBuffer>> DeviceBuffer::Allocate(const Runtime& runtime, uint64_t bytes) {
  auto impl = std::make_unique<Impl>();
  impl->device = &runtime.device();
  // The device's first memory space: the one its kernels and sessions' staging use.
  HEXIR_ASSIGN_OR_RETURN(impl->buffer, impl->device->allocator().Allocate(0, bytes, 256));
  return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(std::move(impl)));
}

DeviceBuffer::DeviceBuffer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DeviceBuffer::~DeviceBuffer() = default;

void* DeviceBuffer::data() const { return impl_->buffer->data(); }
uint64_t DeviceBuffer::size() const { return impl_->buffer->size(); }

Status DeviceBuffer::CopyFromHost(const void* source, uint64_t bytes, uint64_t offset) {
  HEXIR_RETURN_IF_ERROR(CheckRange(size(), bytes, offset, "a copy from the host"));
  if (bytes == 0) return Status::Ok();
  // The device's own queue (load-time work): its commands may come from several threads, and
  // its Synchronize waits at most for another thread's load as well.
  hal::CommandQueue* queue = &impl_->device->queue();
  HEXIR_RETURN_IF_ERROR(queue->Copy(hal::CopyDirection::kHostToDevice, static_cast<char*>(data()) + offset, source,
                                    bytes));
  return queue->Synchronize();
}

Status DeviceBuffer::CopyToHost(void* target, uint64_t bytes, uint64_t offset) const {
  HEXIR_RETURN_IF_ERROR(CheckRange(size(), bytes, offset, "a copy to the host"));
  if (bytes == 0) return Status::Ok();
  hal::CommandQueue* queue = &impl_->device->queue();
  HEXIR_RETURN_IF_ERROR(queue->Copy(hal::CopyDirection::kDeviceToHost, target,
                                    static_cast<const char*>(data()) + offset, bytes));
  return queue->Synchronize();
}

}  // namespace hexir

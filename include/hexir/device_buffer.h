// DeviceBuffer: memory of a Runtime's device that the caller holds, for inputs and outputs
// bound with MemoryLocation::kDevice: kernels read and write it in place, with no copy per run
// (on a GPU, the tensors stay in GPU memory between runs, or between models). Also what a
// caller without CUDA code of its own allocates GPU memory with.
//
//   auto x = hexir::DeviceBuffer::Allocate(*runtime, bytes);
//   (*x)->CopyFromHost(host_input, bytes);
//   hexir::TensorView in{(*x)->data(), type, shape, hexir::MemoryLocation::kDevice};
//
// The buffer is aligned to 256 bytes (more than any device asks of bound memory). On the host
// device it is process memory. Ownership: frees itself; the Runtime must outlive it.
// Thread safety: the copies are synchronous and may run on any thread; the caller orders them
// with the Runs that use the buffer.
#pragma once

#include "hexir/export.h"
#include <cstdint>
#include <memory>

#include "hexir/runtime.h"
#include "hexir/status.h"

namespace hexir {

class HEXIR_API DeviceBuffer {
 public:
  // RESOURCE_EXHAUSTED when the device has not that much memory.
  static StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(const Runtime& runtime, uint64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // The device address (on CUDA a CUdeviceptr, cast to a pointer): bind it with
  // MemoryLocation::kDevice; never dereference it on the host unless the device is the host.
  void* data() const;
  uint64_t size() const;
  // Copies `bytes` between host memory and the buffer at `offset`, and waits for the copy.
  // OUT_OF_RANGE when [offset, offset + bytes) is not inside the buffer.
  Status CopyFromHost(const void* source, uint64_t bytes, uint64_t offset = 0);
  Status CopyToHost(void* target, uint64_t bytes, uint64_t offset = 0) const;

 private:
  struct Impl;
  explicit DeviceBuffer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hexir

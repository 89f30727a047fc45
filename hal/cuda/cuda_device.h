// The CUDA backend (hal/cuda/): a GPU driven through the CUDA Driver API, opened with dlopen
// (cuda_library.h; no CUDA header or toolkit at build time). Its primary context, one stream
// (cuda_queue.h), its global memory as the memory space "device" (cuda_allocator.h), PTX kernel
// libraries JIT-compiled by the driver (cuda_executable.h). Constants are uploaded once through
// a pinned staging buffer; a caller's tensors go through device staging made at session
// creation (inputs copied in before the run, outputs copied out after it).
//
// Thread safety: as hal::Device.
#pragma once

#include <memory>

#include "hal/device.h"

namespace hexir::hal::cuda {

// FAILED_PRECONDITION when there is no driver library, no device, or no device `ordinal`.
StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal);

}  // namespace hexir::hal::cuda

// The host (CPU) backend: device memory is process memory, kernels are functions in an ELF
// shared object loaded from memory (memfd + dlopen), and a dispatch's workgroups are split
// over a thread pool (hal/host/thread_pool.h) of `threads` threads (0: every core).
//
// Thread safety: as hal::Device.
#pragma once

#include <memory>

#include "hal/device.h"

namespace hexir::hal {

std::unique_ptr<Device> CreateHostDevice(int threads = 1);

}  // namespace hexir::hal

// The host (CPU) backend: device memory is process memory (one memory space, "host"), kernels
// are functions in an ELF shared object loaded from memory (memfd + dlopen) after checking the
// CPU has the extensions they were compiled for, and a dispatch's workgroups are split over a
// thread pool of `threads` threads (0: every core). Constants are used in place from the
// caller's bytes; a caller's tensors are bound in place when aligned to their element size.
//
// Thread safety: as hal::Device.
#pragma once

#include <memory>

#include "hal/device.h"

namespace hexir::hal {

std::unique_ptr<Device> CreateHostDevice(int threads = 1);

}  // namespace hexir::hal

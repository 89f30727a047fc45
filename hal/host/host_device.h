// The host (CPU) backend: device memory is process memory, kernels are functions in an ELF
// shared object loaded from memory (memfd + dlopen), dispatches run on the calling thread.
//
// Thread safety: as hal::Device.
#pragma once

#include <memory>

#include "hal/device.h"

namespace hexir::hal {

std::unique_ptr<Device> CreateHostDevice();

}  // namespace hexir::hal

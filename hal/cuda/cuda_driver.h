// The CUDA backend's driver: "cuda" or "cuda:N" (the N-th GPU; default 0).
#pragma once

#include <memory>

#include "hal/driver.h"

namespace hexir::hal::cuda {

std::unique_ptr<Driver> CreateCudaDriver();

}  // namespace hexir::hal::cuda

// The host backend's driver: "host" (alias "cpu"), always present.
#pragma once

#include <memory>

#include "hal/driver.h"

namespace hexir::hal {

std::unique_ptr<Driver> CreateHostDriver();

}  // namespace hexir::hal

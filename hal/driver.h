// hal::Driver: makes devices of one kind ("host", "cuda"). The runtime asks the driver
// registry (hal/driver_registry.h) for a device by name; each backend adds its driver there.
//
// Thread safety: CreateDevice is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "hexir/status.h"
#include "hal/device.h"

namespace hexir::hal {

struct DeviceOptions {
  std::string name;  // as asked: "host", "cuda", "cuda:1"
  int threads = 0;   // host: worker threads per dispatch; 0: every core
};

class Driver {
 public:
  virtual ~Driver() = default;
  // The name devices are asked for by ("host"), then "NAME:INDEX" for one of several.
  virtual std::string name() const = 0;
  // FAILED_PRECONDITION when no such device is present (no GPU, no driver library).
  virtual StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) = 0;
};

}  // namespace hexir::hal

#include "hal/host/host_driver.h"

#include "hal/host/host_device.h"

namespace hexir::hal {
namespace {

class HostDriver final : public Driver {
 public:
  std::string name() const override { return "host"; }
  StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) override {
    if (options.threads < 0)
      return InvalidArgumentError("threads must be 0 (every core) or more, got ", options.threads);
    return CreateHostDevice(options.threads);
  }
};

}  // namespace

std::unique_ptr<Driver> CreateHostDriver() { return std::make_unique<HostDriver>(); }

}  // namespace hexir::hal

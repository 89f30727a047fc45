#include "hal/cuda/cuda_driver.h"

#include <cstdlib>

#include "hal/cuda/cuda_device.h"

namespace hexir::hal::cuda {
namespace {

class CudaDriver final : public Driver {
 public:
  std::string name() const override { return "cuda"; }
  StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) override {
    int ordinal = 0;
    size_t colon = options.name.find(':');
    if (colon != std::string::npos) {
      const std::string digits = options.name.substr(colon + 1);
      char* end = nullptr;
      long value = std::strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || value < 0 || value > 1024)
        return InvalidArgumentError("device '", options.name, "': expected cuda:N with N a device number");
      ordinal = static_cast<int>(value);
    }
    return CreateCudaDevice(ordinal);
  }
};

}  // namespace

std::unique_ptr<Driver> CreateCudaDriver() { return std::make_unique<CudaDriver>(); }

}  // namespace hexir::hal::cuda

#include "hal/driver_registry.h"

#include "hal/cuda/cuda_driver.h"
#include "hal/host/host_driver.h"

namespace hexir::hal {

const DriverRegistry& DriverRegistry::Default() {
  static const DriverRegistry* registry = [] {
    auto* r = new DriverRegistry();
    r->Register(CreateHostDriver(), {"cpu"});
    r->Register(cuda::CreateCudaDriver());
    return r;
  }();
  return *registry;
}

void DriverRegistry::Register(std::unique_ptr<Driver> driver, std::vector<std::string> aliases) {
  entries_.push_back({std::move(driver), std::move(aliases)});
}

std::vector<std::string> DriverRegistry::names() const {
  std::vector<std::string> names;
  for (const Entry& e : entries_) names.push_back(e.driver->name());
  return names;
}

StatusOr<std::unique_ptr<Device>> DriverRegistry::CreateDevice(const DeviceOptions& options) const {
  std::string kind = options.name.substr(0, options.name.find(':'));
  for (const Entry& e : entries_) {
    bool match = e.driver->name() == kind;
    for (const std::string& alias : e.aliases) match |= alias == kind;
    if (match) return e.driver->CreateDevice(options);
  }
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  return NotFoundError("no such device '", options.name, "' (devices: ", known, ")");
}

}  // namespace hexir::hal

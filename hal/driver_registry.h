// hal::DriverRegistry: the drivers this build of the runtime has, by name. The runtime asks it
// for a device ("host", "cpu", "cuda:0") instead of testing names itself.
//
// Thread safety: the default registry is built once, then read-only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hexir/status.h"
#include "hal/driver.h"

namespace hexir::hal {

class DriverRegistry {
 public:
  // Every driver of this build: host (alias cpu) and cuda (its device answers
  // FAILED_PRECONDITION, saying why, where there is no driver library or no GPU).
  static const DriverRegistry& Default();

  void Register(std::unique_ptr<Driver> driver, std::vector<std::string> aliases = {});
  std::vector<std::string> names() const;
  // "NAME" or "NAME:INDEX" (or an alias); NOT_FOUND naming the known drivers otherwise.
  StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) const;

 private:
  struct Entry {
    std::unique_ptr<Driver> driver;
    std::vector<std::string> aliases;
  };
  std::vector<Entry> entries_;
};

}  // namespace hexir::hal

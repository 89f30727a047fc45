// Runtime: the device a process runs modules on, created once and shared.
//
//   auto runtime = hexir::Runtime::Create({});          // the host CPU, all cores
//   auto module = hexir::Module::Load(**runtime, "model.hxb");
//   auto session = hexir::Session::Create(*module);
//
// Ownership: modules and sessions borrow the Runtime; it must outlive them. Destroying it
// frees everything it allocated. Thread safety: thread-safe; share one across threads.
#pragma once

#include "hexir/export.h"
#include <memory>
#include <string>

#include "hexir/status.h"

namespace hexir {

namespace hal {
class Device;
}  // namespace hal

struct RuntimeOptions {
  std::string device = "host";  // "host" (the CPU); "cuda" reports no device where none is
  int threads = 0;              // host worker threads per dispatch; 0: every core
};

class HEXIR_API Runtime {
 public:
  // NOT_FOUND for an unknown device name; FAILED_PRECONDITION when the device is absent.
  static StatusOr<std::unique_ptr<Runtime>> Create(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const std::string& device_name() const { return device_name_; }
  // Device buffers allocated and not yet freed (arenas, staging, filled constants): zero once
  // every Session and Module made with this runtime is destroyed.
  uint64_t live_buffers() const;
  uint64_t live_bytes() const;
  // The HAL device (for Hexir's own libraries; not part of the stable API).
  hal::Device& device() const { return *device_; }

 private:
  Runtime(std::unique_ptr<hal::Device> device, std::string name);
  std::unique_ptr<hal::Device> device_;
  std::string device_name_;
};

}  // namespace hexir

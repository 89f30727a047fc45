// Module: a loaded executable (the load phase). Load() maps the file, verifies it once
// (serializer::ExecutableView::Open), loads every kernel library onto the device and resolves
// every entry point, and makes the constant pool resident (on the host: used in place from the
// mapping, so loading does not read the weights). Splat constants are filled once, here.
//
// Ownership: the Module owns its mapping and loaded kernels; it borrows `device`, which must
// outlive it. Sessions hold a shared_ptr to their Module.
// Thread safety: immutable after Load(); share it freely across threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/file_mapping.h"
#include "base/status.h"
#include "hal/device.h"
#include "serializer/reader.h"

namespace hexir {

struct ModuleOptions {
  // Checksum the constant pool at load (reads every weight once).
  bool verify_weights = false;
};

class Module {
 public:
  static StatusOr<std::shared_ptr<const Module>> Load(const std::string& path, hal::Device* device,
                                                      const ModuleOptions& options = {});
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const serializer::ExecutableView& view() const { return view_; }
  hal::Device& device() const { return *device_; }
  const hal::Executable& library(uint32_t index) const { return *libraries_[index]; }
  // The constant pool on the device (nullptr when there is none).
  hal::DevicePtr constants() const { return constants_; }
  // The splat constants, filled at load (nullptr when there are none).
  hal::DevicePtr filled_constants() const { return filled_constants_; }
  // Size in bytes of the file's sections, for reporting.
  uint64_t file_bytes() const { return mapping_->bytes().size(); }

 private:
  Module(std::unique_ptr<FileMapping> mapping, serializer::ExecutableView view, hal::Device* device)
      : mapping_(std::move(mapping)), view_(view), device_(device) {}

  std::unique_ptr<FileMapping> mapping_;
  serializer::ExecutableView view_;
  hal::Device* device_;
  std::vector<std::unique_ptr<hal::Executable>> libraries_;
  hal::DevicePtr constants_ = nullptr;
  hal::DevicePtr filled_constants_ = nullptr;
};

}  // namespace hexir

// vm::Module: the load phase behind hexir::Module (include/hexir/module.h): the mapped file,
// its verified view, the kernels loaded on the device, the resident constants, and each
// function's signature as TensorInfo.
//
// Ownership: owns the mapping, kernels and resident constants; borrows the device, which must
// outlive it. Thread safety: immutable after Load().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/file_mapping.h"
#include "hal/device.h"
#include "hexir/module.h"
#include "hexir/status.h"
#include "hexir/types.h"
#include "serializer/reader.h"

namespace hexir::vm {

struct FunctionInfo {
  const serializer::fb::Function* function;
  std::vector<TensorInfo> inputs, outputs;
};

class Module {
 public:
  static StatusOr<std::unique_ptr<Module>> Load(const std::string& path, hal::Device* device,
                                                const ModuleOptions& options = {});
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const serializer::ExecutableView& view() const { return view_; }
  hal::Device& device() const { return *device_; }
  const hal::Executable& library(uint32_t index) const { return *libraries_[index]; }
  // The constant pool on the device (nullptr when there is none).
  hal::DevicePtr constants() const { return constants_ ? constants_->data() : nullptr; }
  // The splat constants, filled at load (nullptr when there are none).
  hal::DevicePtr filled_constants() const { return filled_constants_ ? filled_constants_->data() : nullptr; }
  // The device's memory space for memory space `index` of the executable.
  uint32_t device_memory_space(uint32_t index) const { return device_spaces_[index]; }
  uint64_t file_bytes() const { return mapping_->bytes().size(); }
  // The function named `name`, or NOT_FOUND listing the functions there are.
  StatusOr<const FunctionInfo*> FindFunction(const std::string& name) const;
  const std::vector<FunctionInfo>& functions() const { return functions_; }

 private:
  Module(std::unique_ptr<FileMapping> mapping, serializer::ExecutableView view, hal::Device* device)
      : mapping_(std::move(mapping)), view_(view), device_(device) {}

  std::unique_ptr<FileMapping> mapping_;
  serializer::ExecutableView view_;
  hal::Device* device_;
  std::vector<std::unique_ptr<hal::Executable>> libraries_;
  std::vector<uint32_t> device_spaces_;  // per memory space of the executable
  // Declared after the mapping: destroyed first (host constants are the mapped bytes).
  hal::BufferPtr constants_;
  hal::BufferPtr filled_constants_;
  std::vector<FunctionInfo> functions_;
};

}  // namespace hexir::vm

// CudaExecutable: a PTX kernel library loaded with cuModuleLoadDataEx (the driver compiles it
// for the GPU; its error log goes into the Status), with each entry's function and block shape.
// Ownership: unloads the module on destruction. Thread safety: immutable.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "hal/cuda/cuda_context.h"
#include "hal/executable.h"

namespace hexir::hal::cuda {

// PTX for sm_XY runs on devices of compute capability X.Y and later (the driver compiles it for
// the device); an older device must refuse it. `required`, `device`: major * 10 + minor.
Status CheckComputeCapability(uint32_t required, int device, const std::string& device_name);

class CudaExecutable final : public Executable {
 public:
  static StatusOr<std::unique_ptr<CudaExecutable>> Load(const CudaContext& context, const ExecutableSource& source);
  ~CudaExecutable() override;

  uint32_t entry_count() const override { return static_cast<uint32_t>(functions_.size()); }
  CUfunction function(uint32_t entry) const { return functions_[entry]; }
  const std::array<uint32_t, 3>& block(uint32_t entry) const { return blocks_[entry]; }

 private:
  CudaExecutable(const CudaContext& context, CUmodule module) : context_(context), module_(module) {}
  const CudaContext& context_;
  CUmodule module_;
  std::vector<CUfunction> functions_;
  std::vector<std::array<uint32_t, 3>> blocks_;
};

}  // namespace hexir::hal::cuda

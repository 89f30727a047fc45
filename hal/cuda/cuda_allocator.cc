#include "hal/cuda/cuda_allocator.h"

#include "base/alignment.h"
#include "base/log.h"

namespace hexir::hal::cuda {
namespace {
constexpr uint64_t kCuMemAllocAlignment = 256;
}  // namespace

CudaAllocator::CudaAllocator(const CudaContext& context)
    : context_(context), spaces_{{"device", /*host_visible=*/false}} {}

StatusOr<DevicePtr> CudaAllocator::DoAllocate(uint32_t, uint64_t bytes, uint64_t alignment) {
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  uint64_t extra = alignment > kCuMemAllocAlignment ? alignment - kCuMemAllocAlignment : 0;
  uint64_t size = std::max<uint64_t>(bytes, 1) + extra;
  CUdeviceptr base = 0;
  Status s = context_.api->Check(context_.api->cuMemAlloc(&base, size), "cuMemAlloc");
  if (!s.ok()) return Status(s.code(), "device allocation of " + std::to_string(bytes) + " bytes: " + s.message());
  CUdeviceptr aligned = AlignUp(base, std::max<uint64_t>(alignment, 1));
  std::lock_guard<std::mutex> lock(mu_);
  base_of_[aligned] = base;
  return FromCu(aligned);
}

StatusOr<uint64_t> CudaAllocator::AvailableBytes(uint32_t space) const {
  if (space >= spaces_.size()) return InvalidArgumentError("memory space ", space, " does not exist on a CUDA device");
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  size_t free_bytes = 0, total_bytes = 0;
  HEXIR_RETURN_IF_ERROR(context_.api->Check(context_.api->cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo"));
  return static_cast<uint64_t>(free_bytes);
}

void CudaAllocator::DoFree(uint32_t, DevicePtr data, uint64_t) {
  CUdeviceptr base = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = base_of_.find(ToCu(data));
    if (it == base_of_.end()) return;
    base = it->second;
    base_of_.erase(it);
  }
  Status s = context_.MakeCurrent();
  if (s.ok()) s = context_.api->Check(context_.api->cuMemFree(base), "cuMemFree");
  if (!s.ok()) Log(LogSeverity::kError, s.message());  // a destructor has no Status to return
}

}  // namespace hexir::hal::cuda

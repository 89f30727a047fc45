#include "hal/cuda/cuda_queue.h"

#include "base/log.h"
#include "hal/cuda/cuda_executable.h"

namespace hexir::hal::cuda {
namespace {
// Kernel parameters are passed as an array of pointers to each binding, on the stack: a
// dispatch allocates nothing.
constexpr uint32_t kMaxBindings = 512;
}  // namespace

StatusOr<std::unique_ptr<CudaQueue>> CudaQueue::Create(const CudaContext& context) {
  HEXIR_RETURN_IF_ERROR(context.MakeCurrent());
  CUstream stream = nullptr;
  HEXIR_RETURN_IF_ERROR(
      context.api->Check(context.api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  std::unique_ptr<CudaQueue> queue(new CudaQueue(context, stream));
  for (Clock& clock : queue->clocks_)
    for (CUevent* event : {&clock.start, &clock.end})
      HEXIR_RETURN_IF_ERROR(context.api->Check(context.api->cuEventCreate(event, CU_EVENT_DEFAULT), "cuEventCreate"));
  return queue;
}

CudaQueue::~CudaQueue() {
  Status s = context_.MakeCurrent();
  for (const Clock& clock : clocks_)
    for (CUevent event : {clock.start, clock.end})
      if (s.ok() && event != nullptr) s = context_.api->Check(context_.api->cuEventDestroy(event), "cuEventDestroy");
  if (s.ok()) s = context_.api->Check(context_.api->cuStreamDestroy(stream_), "cuStreamDestroy");
  if (!s.ok()) Log(LogSeverity::kError, s.message());
}

Status CudaQueue::BeginTiming(TimingClock which) {
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  Clock& clock = clocks_[static_cast<int>(which)];
  clock.timed = false;
  return context_.api->Check(context_.api->cuEventRecord(clock.start, stream_), "cuEventRecord");
}

Status CudaQueue::EndTiming(TimingClock which) {
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  Clock& clock = clocks_[static_cast<int>(which)];
  HEXIR_RETURN_IF_ERROR(context_.api->Check(context_.api->cuEventRecord(clock.end, stream_), "cuEventRecord"));
  clock.timed = true;
  return Status::Ok();
}

StatusOr<std::optional<double>> CudaQueue::TimedMilliseconds(TimingClock which) {
  const Clock& clock = clocks_[static_cast<int>(which)];
  if (!clock.timed) return std::optional<double>();
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  float ms = 0;
  HEXIR_RETURN_IF_ERROR(
      context_.api->Check(context_.api->cuEventElapsedTime(&ms, clock.start, clock.end), "cuEventElapsedTime"));
  return std::optional<double>(ms);
}

Status CudaQueue::Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                           Span<const DevicePtr> bindings) {
  // Only CUDA executables reach a CUDA queue (the CUDA device made them).
  const auto& exe = static_cast<const CudaExecutable&>(executable);
  if (bindings.size() > kMaxBindings)
    return InvalidArgumentError("a dispatch of ", bindings.size(), " bindings; the CUDA backend passes at most ",
                                kMaxBindings);
  void* params[kMaxBindings];
  for (size_t i = 0; i < bindings.size(); ++i) params[i] = const_cast<DevicePtr*>(&bindings.data()[i]);
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  const std::array<uint32_t, 3>& block = exe.block(entry);
  return context_.api->Check(context_.api->cuLaunchKernel(exe.function(entry), workgroups.x, workgroups.y,
                                                          workgroups.z, block[0], block[1], block[2], 0, stream_,
                                                          params, nullptr),
                             "cuLaunchKernel");
}

Status CudaQueue::Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) {
  HEXIR_RETURN_IF_ERROR(CheckFill(length, pattern_length));
  if (length == 0) return Status::Ok();
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  const CudaLibrary& api = *context_.api;
  CUdeviceptr p = ToCu(target);
  uint64_t count = length / pattern_length;
  switch (pattern_length) {
    case 1: return api.Check(api.cuMemsetD8Async(p, static_cast<unsigned char>(pattern), count, stream_), "cuMemsetD8Async");
    case 2:
      return api.Check(api.cuMemsetD16Async(p, static_cast<unsigned short>(pattern), count, stream_), "cuMemsetD16Async");
    case 4:
      return api.Check(api.cuMemsetD32Async(p, static_cast<unsigned int>(pattern), count, stream_), "cuMemsetD32Async");
    default: {
      // 8 bytes: its two 32-bit halves, each every 8 bytes (a 2-D memset of one column).
      auto lo = static_cast<unsigned int>(pattern), hi = static_cast<unsigned int>(pattern >> 32);
      if (lo == hi) return api.Check(api.cuMemsetD32Async(p, lo, count * 2, stream_), "cuMemsetD32Async");
      HEXIR_RETURN_IF_ERROR(api.Check(api.cuMemsetD2D32Async(p, 8, lo, 1, count, stream_), "cuMemsetD2D32Async"));
      return api.Check(api.cuMemsetD2D32Async(p + 4, 8, hi, 1, count, stream_), "cuMemsetD2D32Async");
    }
  }
}

Status CudaQueue::Copy(CopyDirection direction, void* target, const void* source, uint64_t length) {
  if (length == 0) return Status::Ok();
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  const CudaLibrary& api = *context_.api;
  switch (direction) {
    case CopyDirection::kHostToDevice:
      return api.Check(api.cuMemcpyHtoDAsync(ToCu(target), source, length, stream_), "cuMemcpyHtoDAsync");
    case CopyDirection::kDeviceToHost:
      return api.Check(api.cuMemcpyDtoHAsync(target, ToCu(source), length, stream_), "cuMemcpyDtoHAsync");
    case CopyDirection::kDeviceToDevice:
      return api.Check(api.cuMemcpyDtoDAsync(ToCu(target), ToCu(source), length, stream_), "cuMemcpyDtoDAsync");
  }
  return InvalidArgumentError("unknown copy direction");
}

Status CudaQueue::Synchronize() {
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  return context_.api->Check(context_.api->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

}  // namespace hexir::hal::cuda

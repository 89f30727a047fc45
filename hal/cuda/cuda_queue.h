// The CUDA backend's command execution: one stream, on which dispatches (cuLaunchKernel with the
// entry's block shape), fills (cuMemset*) and copies (cuMemcpy*Async, by direction) are
// enqueued in order; Synchronize() waits for the stream.
// Thread safety: as hal::CommandQueue (the stream orders commands from several threads).
#pragma once

#include "hal/command_queue.h"
#include "hal/cuda/cuda_context.h"

namespace hexir::hal::cuda {

class CudaQueue final : public CommandQueue {
 public:
  static StatusOr<std::unique_ptr<CudaQueue>> Create(const CudaContext& context);
  ~CudaQueue() override;

  Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                  Span<const DevicePtr> bindings) override;
  Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) override;
  Status Copy(CopyDirection direction, void* target, const void* source, uint64_t length) override;
  Status Synchronize() override;
  Status BeginTiming(TimingClock clock) override;
  Status EndTiming(TimingClock clock) override;
  StatusOr<std::optional<double>> TimedMilliseconds(TimingClock clock) override;
  CUstream stream() const { return stream_; }

 private:
  CudaQueue(const CudaContext& context, CUstream stream) : context_(context), stream_(stream) {}
  const CudaContext& context_;
  CUstream stream_;
  // One start and end event per clock, made with the queue, so that timing allocates nothing.
  struct Clock {
    CUevent start = nullptr, end = nullptr;
    bool timed = false;
  };
  Clock clocks_[2];
};

}  // namespace hexir::hal::cuda

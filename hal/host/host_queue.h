// The host backend's command execution: a dispatch's workgroups are split over a thread pool
// (hal/host/thread_pool.h); fills and copies are memset/memcpy. Everything completes before
// the call returns, so Synchronize() has nothing to wait for.
// Thread safety: as hal::CommandQueue.
#pragma once

#include "hal/command_queue.h"
#include "hal/host/thread_pool.h"

namespace hexir::hal {

class HostQueue final : public CommandQueue {
 public:
  // Dispatches run on `pool`, which the device owns and every queue of it shares.
  explicit HostQueue(ThreadPool& pool) : pool_(pool) {}

  Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                  Span<const DevicePtr> bindings) override;
  Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) override;
  Status Copy(CopyDirection direction, void* target, const void* source, uint64_t length) override;
  Status Synchronize() override { return Status::Ok(); }

 private:
  ThreadPool& pool_;
};

}  // namespace hexir::hal

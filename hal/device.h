// hal::Device: one compute device (the host CPU, a CUDA GPU), made by its driver
// (hal/driver.h). It has memory (allocator(), by memory space), runs work (queue()), loads
// executables after checking their requirements, and makes the three decisions that differ
// between a CPU and a device with memory of its own:
//  - MakeResident: where a module's constants live (the host uses the mapped file in place; a
//    GPU copies them into device memory once);
//  - BindHostInput / BindHostOutput / FinishHostOutput / CompleteHostOutput: how a caller's
//    tensor reaches kernels (the host binds the caller's memory itself when aligned; a GPU goes
//    through pinned host staging and device staging);
//  - LoadExecutable: which formats and requirements it accepts.
//
// Ownership: destroying a device with live buffers logs a warning through the runtime's log
// (base/log.h). Thread safety: LoadExecutable, MakeResident and the allocator are thread-safe;
// the queue as hal/command_queue.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hal/allocator.h"
#include "hal/buffer.h"
#include "hal/command_graph.h"
#include "hal/command_queue.h"
#include "hal/executable.h"

namespace hexir::hal {

// Page-locked host memory a session stages a caller's tensor through on a device with memory of
// its own (CUDA: cuMemHostAlloc), so that copies between it and the device run asynchronously at
// full bandwidth. Made once at Session::Create; frees itself.
class HostStaging {
 public:
  virtual ~HostStaging() = default;
  virtual void* data() const = 0;
  virtual uint64_t size() const = 0;
};
using HostStagingPtr = std::unique_ptr<HostStaging>;

class Device {
 public:
  virtual ~Device() = default;

  // "host", "cuda:0", ...
  virtual std::string name() const = 0;
  virtual Allocator& allocator() = 0;
  // The allocator's memory space for an executable's space named `name`: the one of that name,
  // or, on a device that can simulate it, another (the host holds every space the CPU sees in
  // its own memory). None when the device cannot hold it.
  virtual std::optional<uint32_t> MemorySpaceFor(const std::string& name, bool host_visible) {
    (void)host_visible;
    return allocator().FindMemorySpace(name);
  }
  // The device's own queue: load-time work (constants, fills of a module).
  virtual CommandQueue& queue() = 0;
  // A queue of its own for a session: its commands are ordered among themselves and run
  // independently of other sessions' (a CUDA stream; the host's share one thread pool).
  virtual StatusOr<std::unique_ptr<CommandQueue>> CreateQueue() = 0;
  // A graph for a session to record its runs into and replay (hal/command_graph.h), and
  // whether launching one beats issuing its commands (a GPU: one launch instead of one per
  // dispatch). A device without graphs of its own replays the recording.
  virtual StatusOr<std::unique_ptr<CommandGraph>> CreateGraph() { return std::unique_ptr<CommandGraph>(new ReplayGraph); }
  virtual bool PrefersGraphs() const { return false; }

  // INVALID_ARGUMENT for a format the device does not run, FAILED_PRECONDITION for unmet
  // requirements, DATA_LOSS for code it cannot load, NOT_FOUND for a missing entry.
  virtual StatusOr<std::unique_ptr<Executable>> LoadExecutable(const ExecutableSource& source) = 0;

  // Immutable bytes in host memory (a module's constant pool), resident in `memory_space` for
  // as long as the returned buffer lives; the bytes must outlive it too (the host uses them in
  // place).
  virtual StatusOr<BufferPtr> MakeResident(ByteSpan bytes, uint32_t memory_space) = 0;

  // The alignment device memory a caller binds in place (MemoryLocation::kDevice) must have, for
  // elements of `element_size` bytes: the elements' own here; more where kernels access several
  // elements at once (CUDA: 16 bytes, the 128-bit loads and stores of elementwise kernels).
  virtual uint64_t BoundMemoryAlignment(uint64_t element_size) const { return element_size; }
  // Whether binding a caller's input whose elements are `element_size` bytes may need a
  // staging buffer of its size (made once, when a session is created); likewise outputs.
  virtual bool NeedsInputStaging(uint64_t element_size) const = 0;
  virtual bool NeedsOutputStaging() const = 0;
  // Pinned host staging of `bytes` for one of a session's inputs or outputs that needs staging,
  // or nullptr where the device copies the caller's memory directly (the host).
  virtual StatusOr<HostStagingPtr> AllocateHostStaging(uint64_t bytes) {
    (void)bytes;
    return HostStagingPtr();
  }
  // The device pointer kernels read a caller's input through: its own memory when the device
  // can use it, else a copy in `staging` (nullptr when NeedsInputStaging was false), made on
  // `queue` (the session's) before the session's dispatches, through `pinned` when there is one
  // (AllocateHostStaging).
  virtual StatusOr<DevicePtr> BindHostInput(const void* data, uint64_t bytes, uint64_t element_size,
                                            Buffer* staging, HostStaging* pinned, CommandQueue& queue) = 0;
  // The device pointer kernels write a caller's output through; FinishHostOutput, after the
  // run's dispatches on `queue`, issues the copy to the caller's memory when it was not that
  // memory (into `pinned` when there is one); the caller synchronizes `queue`, then calls
  // CompleteHostOutput, which moves what reached `pinned` to the caller's memory.
  virtual StatusOr<DevicePtr> BindHostOutput(void* data, uint64_t bytes, Buffer* staging) = 0;
  virtual Status FinishHostOutput(void* data, uint64_t bytes, Buffer* staging, HostStaging* pinned,
                                  CommandQueue& queue) = 0;
  virtual void CompleteHostOutput(void* data, uint64_t bytes, HostStaging* pinned) {
    (void)data, (void)bytes, (void)pinned;
  }
};

}  // namespace hexir::hal

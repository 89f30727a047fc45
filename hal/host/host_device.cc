#include "hal/host/host_device.h"

#include <algorithm>
#include <thread>

#include "base/alignment.h"
#include "base/log.h"
#include "hal/host/cpu_features.h"
#include "hal/host/host_allocator.h"
#include "hal/host/host_executable.h"
#include "hal/host/host_queue.h"

namespace hexir::hal {
namespace {

class HostDevice final : public Device {
 public:
  explicit HostDevice(int threads) : pool_(threads), queue_(pool_) {}
  ~HostDevice() override {
    Status leaks = allocator_.CheckNoLeaks(name());
    if (!leaks.ok()) Log(LogSeverity::kWarning, leaks.message());
  }

  std::string name() const override { return "host"; }
  Allocator& allocator() override { return allocator_; }
  CommandQueue& queue() override { return queue_; }
  StatusOr<std::unique_ptr<CommandQueue>> CreateQueue() override {
    return std::unique_ptr<CommandQueue>(std::make_unique<HostQueue>(pool_));
  }
  // Every space the CPU sees (a machine's SRAM and DRAM, say) is process memory here: each
  // arena in it is its own allocation, so the spaces stay apart.
  std::optional<uint32_t> MemorySpaceFor(const std::string& name, bool host_visible) override {
    if (std::optional<uint32_t> found = allocator_.FindMemorySpace(name)) return found;
    return host_visible ? std::optional<uint32_t>(0) : std::nullopt;
  }

  StatusOr<std::unique_ptr<Executable>> LoadExecutable(const ExecutableSource& source) override {
    if (source.format != ExecutableFormat::kHostElf)
      return InvalidArgumentError("the host device runs host ELF kernels, not ", ExecutableFormatName(source.format));
    for (const std::string& feature : source.cpu_features)
      if (!HostCpuSupports(feature))
        return FailedPreconditionError("its kernels need the CPU extension '", feature,
                                       "', which this CPU lacks; recompile with hexir-compile --target-cpu ",
                                       "for this machine (e.g. --target-cpu=x86-64-v2)");
    for (const std::array<uint32_t, 3>& size : source.workgroup_sizes)
      if (size[0] != 1 || size[1] != 1 || size[2] != 1)
        return InvalidArgumentError("host kernels run one invocation per workgroup, not ", size[0], "x", size[1],
                                    "x", size[2]);
    HEXIR_ASSIGN_OR_RETURN(auto exe, HostExecutable::Load(source.code, source.entry_names));
    return std::unique_ptr<Executable>(std::move(exe));
  }

  StatusOr<BufferPtr> MakeResident(ByteSpan bytes, uint32_t memory_space) override {
    if (memory_space >= allocator_.memory_spaces().size())
      return InvalidArgumentError("memory space ", memory_space, " does not exist on the host");
    // Host memory is device memory: the bytes are used in place (read-only; the reader
    // guarantees nothing writes into constants).
    return Buffer::Borrow(const_cast<unsigned char*>(bytes.data()), bytes.size(), memory_space);
  }

  // Kernels may rely on natural alignment: a misaligned caller buffer is copied.
  bool NeedsInputStaging(uint64_t element_size) const override { return element_size > 1; }
  bool NeedsOutputStaging() const override { return false; }

  StatusOr<DevicePtr> BindHostInput(const void* data, uint64_t bytes, uint64_t element_size, Buffer* staging,
                                    HostStaging*, CommandQueue& queue) override {
    // Kernels never write inputs (the reader refuses any command that would).
    if (element_size <= 1 || IsPointerAligned(data, element_size)) return const_cast<void*>(data);
    if (staging == nullptr || staging->size() < bytes)
      return InternalError("a misaligned input of ", bytes, " bytes has no staging buffer");
    HEXIR_RETURN_IF_ERROR(queue.Copy(CopyDirection::kHostToDevice, staging->data(), data, bytes));
    return staging->data();
  }

  StatusOr<DevicePtr> BindHostOutput(void* data, uint64_t, Buffer*) override { return data; }
  Status FinishHostOutput(void*, uint64_t, Buffer*, HostStaging*, CommandQueue&) override { return Status::Ok(); }

 private:
  HostAllocator allocator_;
  ThreadPool pool_;
  HostQueue queue_;
};

}  // namespace

std::unique_ptr<Device> CreateHostDevice(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::make_unique<HostDevice>(threads);
}

}  // namespace hexir::hal

#include "hal/host/host_device.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <cstring>

#include "base/alignment.h"
#include "hal/host/host_executable.h"
#include "hal/host/thread_pool.h"

namespace hexir::hal {
namespace {

struct DispatchContext {
  HostKernelFn fn;
  void* const* bindings;
};

void RunWorkgroups(void* ctx, uint32_t begin, uint32_t end) {
  auto* c = static_cast<DispatchContext*>(ctx);
  c->fn(c->bindings, begin, end);
}

class HostDevice final : public Device {
 public:
  explicit HostDevice(int threads) : pool_(threads) {}
  ~HostDevice() override { ReportLeaks(); }

  std::string name() const override { return "host"; }
  bool HasMemorySpace(const std::string& space) const override { return space == "host"; }

  StatusOr<DevicePtr> DoAllocate(uint64_t bytes, uint64_t alignment) override {
    if (!IsPowerOfTwo(alignment)) return InvalidArgumentError("alignment ", alignment, " is not a power of two");
    alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
    void* p = std::aligned_alloc(alignment, AlignUp(bytes == 0 ? 1 : bytes, alignment));
    if (p == nullptr) return ResourceExhaustedError("host allocation of ", bytes, " bytes failed");
    return p;
  }

  void DoFree(DevicePtr ptr) override { std::free(ptr); }

  StatusOr<std::unique_ptr<Executable>> LoadExecutable(
      ExecutableFormat format, ByteSpan code, const std::vector<std::string>& entry_names) override {
    if (format != ExecutableFormat::kHostElf)
      return InvalidArgumentError("the host device runs host ELF kernels, not this format");
    HEXIR_ASSIGN_OR_RETURN(auto exe, HostExecutable::Load(code, entry_names));
    return std::unique_ptr<Executable>(std::move(exe));
  }

  Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                  Span<const DevicePtr> bindings) override {
    // Only host executables reach a host device (LoadExecutable made them).
    const auto& host = static_cast<const HostExecutable&>(executable);
    DispatchContext ctx{host.entry(entry), bindings.data()};
    pool_.ParallelFor(static_cast<uint32_t>(workgroups.total()), RunWorkgroups, &ctx);
    return Status::Ok();
  }

  Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) override {
    auto* dst = static_cast<unsigned char*>(target);
    if (pattern_length == 1) {
      std::memset(dst, static_cast<int>(pattern & 0xff), length);
      return Status::Ok();
    }
    for (uint64_t i = 0; i < length; i += pattern_length) std::memcpy(dst + i, &pattern, pattern_length);
    return Status::Ok();
  }

  Status Copy(DevicePtr target, const void* source, uint64_t length) override {
    std::memmove(target, source, length);
    return Status::Ok();
  }

  Status Synchronize() override { return Status::Ok(); }

 private:
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Device> CreateHostDevice(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::make_unique<HostDevice>(threads);
}

}  // namespace hexir::hal

#include "hal/cuda/cuda_device.h"

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "hal/cuda/cuda_allocator.h"
#include "hal/cuda/cuda_executable.h"
#include "hal/cuda/cuda_graph.h"
#include "hal/cuda/cuda_queue.h"

namespace hexir::hal::cuda {
namespace {

// cuMemHostAlloc'ed memory, freed with the context current.
class PinnedStaging final : public HostStaging {
 public:
  PinnedStaging(const CudaContext& context, void* data, uint64_t size) : context_(context), data_(data), size_(size) {}
  ~PinnedStaging() override {
    Status s = context_.MakeCurrent();
    if (s.ok()) s = context_.api->Check(context_.api->cuMemFreeHost(data_), "cuMemFreeHost");
    if (!s.ok()) Log(LogSeverity::kError, s.message());
  }
  void* data() const override { return data_; }
  uint64_t size() const override { return size_; }

 private:
  const CudaContext& context_;
  void* data_;
  uint64_t size_;
};

class CudaDevice final : public Device {
 public:
  ~CudaDevice() override {
    queue_.reset();
    if (allocator_ != nullptr) {
      Status leaks = allocator_->CheckNoLeaks(name());
      if (!leaks.ok()) Log(LogSeverity::kWarning, leaks.message());
    }
    if (!retained_) return;
    Status s = context_.api->Check(context_.api->cuDevicePrimaryCtxRelease(context_.device), "cuDevicePrimaryCtxRelease");
    if (!s.ok()) Log(LogSeverity::kError, s.message());
  }

  static StatusOr<std::unique_ptr<Device>> Create(const CudaLibrary* api, int ordinal) {
    std::unique_ptr<CudaDevice> device(new CudaDevice());
    CudaContext& c = device->context_;
    c.api = api;
    c.ordinal = ordinal;
    HEXIR_RETURN_IF_ERROR(api->Check(api->cuDeviceGet(&c.device, ordinal), "cuDeviceGet"));
    HEXIR_RETURN_IF_ERROR(api->Check(api->cuDevicePrimaryCtxRetain(&c.context, c.device), "cuDevicePrimaryCtxRetain"));
    device->retained_ = true;
    HEXIR_RETURN_IF_ERROR(api->Check(
        api->cuDeviceGetAttribute(&c.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, c.device),
        "cuDeviceGetAttribute"));
    int major = 0, minor = 0;
    HEXIR_RETURN_IF_ERROR(api->Check(
        api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c.device), "cuDeviceGetAttribute"));
    HEXIR_RETURN_IF_ERROR(api->Check(
        api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c.device), "cuDeviceGetAttribute"));
    c.compute_capability = major * 10 + minor;
    device->allocator_ = std::make_unique<CudaAllocator>(c);
    HEXIR_ASSIGN_OR_RETURN(device->queue_, CudaQueue::Create(c));
    return std::unique_ptr<Device>(std::move(device));
  }

  std::string name() const override { return "cuda:" + std::to_string(context_.ordinal); }
  Allocator& allocator() override { return *allocator_; }
  CommandQueue& queue() override { return *queue_; }
  // A stream per session: sessions on one GPU overlap, and one session's synchronization
  // waits for its own work only.
  StatusOr<std::unique_ptr<CommandQueue>> CreateQueue() override {
    HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<CudaQueue> queue, CudaQueue::Create(context_));
    return std::unique_ptr<CommandQueue>(std::move(queue));
  }

  // A graph launch costs one driver call where a run issues one per dispatch (3.5 us each on an
  // H200): sessions use graphs by default where the driver has them (CUDA 12 and newer).
  StatusOr<std::unique_ptr<CommandGraph>> CreateGraph() override {
    if (!context_.api->has_graphs)
      return FailedPreconditionError("the CUDA driver lacks the graph functions of CUDA 12: it is too old");
    return std::unique_ptr<CommandGraph>(new CudaGraph(context_));
  }
  bool PrefersGraphs() const override { return context_.api->has_graphs; }

  StatusOr<std::unique_ptr<Executable>> LoadExecutable(const ExecutableSource& source) override {
    HEXIR_ASSIGN_OR_RETURN(auto exe, CudaExecutable::Load(context_, source));
    return std::unique_ptr<Executable>(std::move(exe));
  }

  StatusOr<BufferPtr> MakeResident(ByteSpan bytes, uint32_t memory_space) override {
    HEXIR_ASSIGN_OR_RETURN(BufferPtr buffer, allocator_->Allocate(memory_space, bytes.size(), 256));
    if (bytes.empty()) return buffer;
    // Through pinned memory: one asynchronous copy at full bandwidth, then the staging goes.
    HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
    const CudaLibrary& api = *context_.api;
    void* pinned = nullptr;
    HEXIR_RETURN_IF_ERROR(api.Check(api.cuMemHostAlloc(&pinned, bytes.size(), CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc"));
    std::memcpy(pinned, bytes.data(), bytes.size());
    Status s = queue_->Copy(CopyDirection::kHostToDevice, buffer->data(), pinned, bytes.size());
    if (s.ok()) s = queue_->Synchronize();
    Status freed = api.Check(api.cuMemFreeHost(pinned), "cuMemFreeHost");
    HEXIR_RETURN_IF_ERROR(s);
    HEXIR_RETURN_IF_ERROR(freed);
    return buffer;
  }

  // Kernels cannot read the caller's host memory: every tensor goes through device staging,
  // and from there through pinned host staging, so that its copy is asynchronous and at full
  // bandwidth (a copy from pageable memory goes through the driver's own bounce buffers and
  // blocks the host).
  bool NeedsInputStaging(uint64_t) const override { return true; }
  uint64_t BoundMemoryAlignment(uint64_t element_size) const override { return std::max<uint64_t>(element_size, 16); }
  bool NeedsOutputStaging() const override { return true; }

  StatusOr<HostStagingPtr> AllocateHostStaging(uint64_t bytes) override {
    if (bytes == 0) return HostStagingPtr();
    HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
    const CudaLibrary& api = *context_.api;
    void* pinned = nullptr;
    HEXIR_RETURN_IF_ERROR(api.Check(api.cuMemHostAlloc(&pinned, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc"));
    return HostStagingPtr(new PinnedStaging(context_, pinned, bytes));
  }

  StatusOr<DevicePtr> BindHostInput(const void* data, uint64_t bytes, uint64_t, Buffer* staging, HostStaging* pinned,
                                    CommandQueue& queue) override {
    if (bytes == 0) return staging ? staging->data() : nullptr;
    if (staging == nullptr || staging->size() < bytes)
      return InternalError("an input of ", bytes, " bytes has no device staging buffer");
    const void* source = data;
    if (pinned != nullptr && pinned->size() >= bytes) {
      // The previous run synchronized before returning: nothing still reads `pinned`.
      std::memcpy(pinned->data(), data, bytes);
      source = pinned->data();
    }
    HEXIR_RETURN_IF_ERROR(queue.Copy(CopyDirection::kHostToDevice, staging->data(), source, bytes));
    return staging->data();
  }

  StatusOr<DevicePtr> BindHostOutput(void*, uint64_t bytes, Buffer* staging) override {
    if (bytes == 0) return staging ? staging->data() : nullptr;
    if (staging == nullptr || staging->size() < bytes)
      return InternalError("an output of ", bytes, " bytes has no device staging buffer");
    return staging->data();
  }

  Status FinishHostOutput(void* data, uint64_t bytes, Buffer* staging, HostStaging* pinned,
                          CommandQueue& queue) override {
    if (bytes == 0) return Status::Ok();
    if (staging == nullptr) return InternalError("an output of ", bytes, " bytes has no device staging buffer");
    void* target = pinned != nullptr && pinned->size() >= bytes ? pinned->data() : data;
    return queue.Copy(CopyDirection::kDeviceToHost, target, staging->data(), bytes);
  }

  void CompleteHostOutput(void* data, uint64_t bytes, HostStaging* pinned) override {
    if (bytes > 0 && pinned != nullptr && pinned->size() >= bytes) std::memcpy(data, pinned->data(), bytes);
  }

 private:
  CudaDevice() = default;
  CudaContext context_;
  bool retained_ = false;
  std::unique_ptr<CudaAllocator> allocator_;
  std::unique_ptr<CudaQueue> queue_;
};

}  // namespace

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal) {
  HEXIR_ASSIGN_OR_RETURN(const CudaLibrary* api, CudaLibrary::Get());
  int count = 0;
  HEXIR_RETURN_IF_ERROR(api->Check(api->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0) return FailedPreconditionError("no CUDA device: the driver reports none");
  if (ordinal < 0 || ordinal >= count)
    return FailedPreconditionError("no CUDA device cuda:", ordinal, " (the driver reports ", count, ")");
  return CudaDevice::Create(api, ordinal);
}

}  // namespace hexir::hal::cuda

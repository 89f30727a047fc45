#include "hal/cuda/cuda_graph.h"

#include "base/log.h"
#include "hal/cuda/cuda_executable.h"
#include "hal/cuda/cuda_queue.h"

namespace hexir::hal::cuda {
namespace {

// As the queue's launches: a kernel's parameters are pointers to each binding.
constexpr uint32_t kMaxBindings = 512;

CudaKernelNodeParams KernelParams(const RecordedCommand& c, Span<const DevicePtr> bindings, void** storage) {
  // Only CUDA executables reach a CUDA graph (the CUDA device made them).
  const auto& exe = static_cast<const CudaExecutable&>(*c.executable);
  for (size_t i = 0; i < bindings.size(); ++i) storage[i] = const_cast<DevicePtr*>(&bindings.data()[i]);
  CudaKernelNodeParams p;
  p.func = exe.function(c.entry);
  p.gridDimX = c.workgroups.x;
  p.gridDimY = c.workgroups.y;
  p.gridDimZ = c.workgroups.z;
  p.blockDimX = exe.block(c.entry)[0];
  p.blockDimY = exe.block(c.entry)[1];
  p.blockDimZ = exe.block(c.entry)[2];
  p.kernelParams = storage;
  return p;
}

// A fill's memsets: one for a 1-, 2- or 4-byte pattern; for 8 bytes, each 32-bit half every 8
// bytes (a 2-D memset of one column), always two so that a pass may change the pattern.
int MemsetParams(const RecordedCommand& c, CudaMemsetNodeParams out[2]) {
  CUdeviceptr p = ToCu(c.target);
  uint64_t count = c.length / c.pattern_length;
  if (c.pattern_length != 8) {
    out[0].dst = p;
    out[0].elementSize = c.pattern_length;
    out[0].width = count;
    out[0].pitch = c.length;
    out[0].height = 1;
    out[0].value = static_cast<unsigned int>(c.pattern & (c.pattern_length == 4 ? 0xffffffffull
                                                          : c.pattern_length == 2 ? 0xffffull : 0xffull));
    return 1;
  }
  for (int half = 0; half < 2; ++half) {
    out[half].dst = p + 4 * half;
    out[half].elementSize = 4;
    out[half].width = 1;
    out[half].pitch = 8;
    out[half].height = count;
    out[half].value = static_cast<unsigned int>(c.pattern >> (32 * half));
  }
  return 2;
}

CudaMemcpy3D MemcpyParams(const RecordedCommand& c) {
  CudaMemcpy3D m;
  bool from_host = c.direction == CopyDirection::kHostToDevice;
  bool to_host = c.direction == CopyDirection::kDeviceToHost;
  m.srcMemoryType = from_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (from_host) m.srcHost = c.source;
  else m.srcDevice = ToCu(c.source);
  m.dstMemoryType = to_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (to_host) m.dstHost = c.target;
  else m.dstDevice = ToCu(c.target);
  m.WidthInBytes = c.length;
  m.Height = 1;
  m.Depth = 1;
  return m;
}

}  // namespace

CudaGraph::~CudaGraph() {
  Status s = Release();
  if (!s.ok()) Log(LogSeverity::kError, s.message());
}

Status CudaGraph::Release() {
  const CudaLibrary& api = *context_.api;
  if (exec_ == nullptr && graph_ == nullptr) return Status::Ok();
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  if (exec_ != nullptr) {
    CUgraphExec exec = exec_;
    exec_ = nullptr;
    HEXIR_RETURN_IF_ERROR(api.Check(api.cuGraphExecDestroy(exec), "cuGraphExecDestroy"));
  }
  if (graph_ != nullptr) {
    CUgraph graph = graph_;
    graph_ = nullptr;
    HEXIR_RETURN_IF_ERROR(api.Check(api.cuGraphDestroy(graph), "cuGraphDestroy"));
  }
  return Status::Ok();
}

Status CudaGraph::AddNodes(size_t index, CUgraphNode* last) {
  const CudaLibrary& api = *context_.api;
  const RecordedCommand& c = commands()[index];
  auto add = [&](auto&& call, const char* name) -> Status {
    CUgraphNode node = nullptr;
    HEXIR_RETURN_IF_ERROR(api.Check(call(&node, *last == nullptr ? nullptr : last, *last == nullptr ? 0 : 1), name));
    nodes_.push_back(node);
    *last = node;
    return Status::Ok();
  };
  switch (c.kind) {
    case RecordedCommand::Kind::kDispatch: {
      Span<const DevicePtr> b = bindings(c);
      if (b.size() > kMaxBindings)
        return InvalidArgumentError("a dispatch of ", b.size(), " bindings; the CUDA backend passes at most ",
                                    kMaxBindings);
      void* storage[kMaxBindings];
      CudaKernelNodeParams p = KernelParams(c, b, storage);
      return add([&](CUgraphNode* n, const CUgraphNode* d, size_t k) { return api.cuGraphAddKernelNode(n, graph_, d, k, &p); },
                 "cuGraphAddKernelNode");
    }
    case RecordedCommand::Kind::kFill: {
      CudaMemsetNodeParams m[2];
      int count = MemsetParams(c, m);
      for (int i = 0; i < count; ++i)
        HEXIR_RETURN_IF_ERROR(add([&](CUgraphNode* n, const CUgraphNode* d, size_t k) {
          return api.cuGraphAddMemsetNode(n, graph_, d, k, &m[i], context_.context);
        }, "cuGraphAddMemsetNode"));
      return Status::Ok();
    }
    case RecordedCommand::Kind::kCopy: {
      CudaMemcpy3D m = MemcpyParams(c);
      return add([&](CUgraphNode* n, const CUgraphNode* d, size_t k) {
        return api.cuGraphAddMemcpyNode(n, graph_, d, k, &m, context_.context);
      }, "cuGraphAddMemcpyNode");
    }
  }
  return InternalError("unknown recorded command");
}

Status CudaGraph::Instantiate() {
  const CudaLibrary& api = *context_.api;
  HEXIR_RETURN_IF_ERROR(Release());
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  nodes_.clear();
  first_node_.clear();
  HEXIR_RETURN_IF_ERROR(api.Check(api.cuGraphCreate(&graph_, 0), "cuGraphCreate"));
  // One chain in issue order: the stream's order, which the planner's buffer reuse relies on.
  CUgraphNode last = nullptr;
  for (size_t i = 0; i < commands().size(); ++i) {
    first_node_.push_back(static_cast<uint32_t>(nodes_.size()));
    HEXIR_RETURN_IF_ERROR(AddNodes(i, &last));
  }
  first_node_.push_back(static_cast<uint32_t>(nodes_.size()));
  return api.Check(api.cuGraphInstantiate(&exec_, graph_, 0), "cuGraphInstantiate");
}

Status CudaGraph::UpdateCommand(size_t index) {
  const CudaLibrary& api = *context_.api;
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  const RecordedCommand& c = commands()[index];
  const CUgraphNode* nodes = nodes_.data() + first_node_[index];
  switch (c.kind) {
    case RecordedCommand::Kind::kDispatch: {
      void* storage[kMaxBindings];
      CudaKernelNodeParams p = KernelParams(c, bindings(c), storage);
      return api.Check(api.cuGraphExecKernelNodeSetParams(exec_, nodes[0], &p), "cuGraphExecKernelNodeSetParams");
    }
    case RecordedCommand::Kind::kFill: {
      CudaMemsetNodeParams m[2];
      int count = MemsetParams(c, m);
      for (int i = 0; i < count; ++i)
        HEXIR_RETURN_IF_ERROR(api.Check(api.cuGraphExecMemsetNodeSetParams(exec_, nodes[i], &m[i], context_.context),
                                        "cuGraphExecMemsetNodeSetParams"));
      return Status::Ok();
    }
    case RecordedCommand::Kind::kCopy: {
      CudaMemcpy3D m = MemcpyParams(c);
      return api.Check(api.cuGraphExecMemcpyNodeSetParams(exec_, nodes[0], &m, context_.context),
                       "cuGraphExecMemcpyNodeSetParams");
    }
  }
  return InternalError("unknown recorded command");
}

Status CudaGraph::LaunchInstance(CommandQueue& queue) {
  // Only the CUDA device's queues reach its graphs.
  auto& stream = static_cast<CudaQueue&>(queue);
  HEXIR_RETURN_IF_ERROR(context_.MakeCurrent());
  return context_.api->Check(context_.api->cuGraphLaunch(exec_, stream.stream()), "cuGraphLaunch");
}

}  // namespace hexir::hal::cuda

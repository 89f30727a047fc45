#include "vm/session.h"

#include <algorithm>
#include <cstring>

#include "vm/interpreter.h"

namespace hexir::vm {

namespace {

// What a session of `fn` holds, per device memory space: its arenas, and the staging the
// device asks for (in the space of the first arena, which its kernels use).
struct SessionMemory {
  std::vector<uint64_t> bytes;  // per device memory space
  uint64_t arenas = 0, staging = 0;
};

SessionMemory MemoryOf(const Module& module, const FunctionInfo& info, uint32_t staging_space) {
  hal::Device& device = module.device();
  SessionMemory m;
  m.bytes.assign(device.allocator().memory_spaces().size(), 0);
  for (const serializer::fb::Arena* arena : *info.function->arenas()) {
    m.bytes[module.device_memory_space(arena->memory_space())] += arena->bytes();
    m.arenas += arena->bytes();
  }
  for (const TensorInfo& in : info.inputs)
    if (device.NeedsInputStaging(ElementTypeSize(in.element_type))) m.staging += in.byte_size;
  for (const TensorInfo& out : info.outputs)
    if (device.NeedsOutputStaging()) m.staging += out.byte_size;
  m.bytes[staging_space] += m.staging;
  return m;
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Create(const Module& module, const SessionOptions& options) {
  HEXIR_ASSIGN_OR_RETURN(const FunctionInfo* info, module.FindFunction(options.function));
  std::unique_ptr<Session> session(new Session(module, info));
  const serializer::fb::Function& fn = *info->function;
  hal::Device& device = module.device();
  // Staging lives where the function's first arena does (the memory its kernels use).
  uint32_t staging_space = module.device_memory_space(fn.arenas()->size() > 0 ? fn.arenas()->Get(0)->memory_space()
                                                                              : 0);
  // Before allocating: the session's memory against its limit and against what the device
  // has free, so a model that does not fit says so with the numbers.
  SessionMemory memory = MemoryOf(module, *info, staging_space);
  uint64_t total = memory.arenas + memory.staging;
  if (options.memory_limit_bytes != 0 && total > options.memory_limit_bytes)
    return ResourceExhaustedError("a session of function '", options.function, "' needs ", total,
                                  " bytes of device memory (arenas ", memory.arenas, ", staging ", memory.staging,
                                  "), over its limit of ", options.memory_limit_bytes,
                                  " bytes (SessionOptions::memory_limit_bytes)");
  for (uint32_t space = 0; space < memory.bytes.size(); ++space) {
    if (memory.bytes[space] == 0) continue;
    StatusOr<uint64_t> free_bytes = device.allocator().AvailableBytes(space);
    if (free_bytes.ok() && memory.bytes[space] > *free_bytes)
      return ResourceExhaustedError("a session of function '", options.function, "' needs ", memory.bytes[space],
                                    " bytes in memory space '", device.allocator().memory_spaces()[space].name,
                                    "' of device '", device.name(), "', which reports ", *free_bytes, " bytes free");
  }
  // Every arena is in a memory space the module found on the device.
  for (const serializer::fb::Arena* arena : *fn.arenas()) {
    hal::BufferPtr buffer;
    if (arena->bytes() > 0) {
      HEXIR_ASSIGN_OR_RETURN(buffer, device.allocator().Allocate(module.device_memory_space(arena->memory_space()),
                                                                 arena->bytes(), arena->alignment()));
    }
    session->arena_bases_.push_back(buffer ? buffer->data() : nullptr);
    session->arenas_.push_back(std::move(buffer));
  }
  for (const TensorInfo& in : info->inputs) {
    hal::BufferPtr staging;
    if (device.NeedsInputStaging(ElementTypeSize(in.element_type)) && in.byte_size > 0) {
      HEXIR_ASSIGN_OR_RETURN(staging, device.allocator().Allocate(staging_space, in.byte_size, 64));
    }
    hal::HostStagingPtr pinned;
    if (staging) {
      HEXIR_ASSIGN_OR_RETURN(pinned, device.AllocateHostStaging(in.byte_size));
    }
    session->input_staging_.push_back(std::move(staging));
    session->input_pinned_.push_back(std::move(pinned));
  }
  for (const TensorInfo& out : info->outputs) {
    hal::BufferPtr staging;
    if (device.NeedsOutputStaging() && out.byte_size > 0) {
      HEXIR_ASSIGN_OR_RETURN(staging, device.allocator().Allocate(staging_space, out.byte_size, 64));
    }
    hal::HostStagingPtr pinned;
    if (staging) {
      HEXIR_ASSIGN_OR_RETURN(pinned, device.AllocateHostStaging(out.byte_size));
    }
    session->output_staging_.push_back(std::move(staging));
    session->output_pinned_.push_back(std::move(pinned));
  }
  session->input_bases_.resize(info->inputs.size());
  session->output_bases_.resize(info->outputs.size());
  session->bindings_.resize(MaxDispatchArity(fn));
  HEXIR_ASSIGN_OR_RETURN(session->queue_, device.CreateQueue());
  session->time_device_ = options.time_device;
  session->poison_ = options.poison;
  if (options.profile) session->command_ms_.assign(fn.commands()->size(), 0.0);
  bool graphs = options.graphs == SessionOptions::Graphs::kOn ||
                (options.graphs == SessionOptions::Graphs::kAuto && device.PrefersGraphs());
  if (graphs && !options.profile) {
    HEXIR_ASSIGN_OR_RETURN(session->graph_, device.CreateGraph());
  }
  return session;
}

Session::~Session() = default;

uint64_t Session::arena_bytes() const {
  uint64_t bytes = 0;
  for (const serializer::fb::Arena* arena : *info_->function->arenas()) bytes += arena->bytes();
  return bytes;
}

GraphStats Session::graph_stats() const {
  GraphStats stats;
  if (graph_ == nullptr) return stats;
  stats.enabled = true;
  stats.instantiations = graph_->stats().instantiations;
  stats.node_updates = graph_->stats().node_updates;
  stats.launches = graph_->stats().launches;
  return stats;
}

std::vector<CommandProfile> Session::profile() const {
  namespace fb = serializer::fb;
  std::vector<CommandProfile> result;
  if (command_ms_.empty()) return result;
  const auto* libraries = module_.view().executable().libraries();
  uint32_t index = 0;
  for (const fb::Command* cmd : *info_->function->commands()) {
    CommandProfile p;
    p.index = index;
    p.total_ms = command_ms_[index++];
    p.runs = profiled_runs_;
    p.device_clock = profile_device_clock_;
    switch (cmd->op_type()) {
      case fb::CommandOp::DispatchCommand: {
        const auto* d = cmd->op_as_DispatchCommand();
        p.kind = "dispatch";
        p.name = libraries->Get(d->library())->entries()->Get(d->entry())->name()->str();
        p.workgroups = 1;
        for (uint32_t w : *d->workgroups()) p.workgroups *= w;
        if (d->sources() != nullptr)
          for (const auto* s : *d->sources()) p.sources.push_back(s->str());
        break;
      }
      case fb::CommandOp::CopyCommand: p.kind = "copy"; break;
      case fb::CommandOp::FillCommand: p.kind = "fill"; break;
      default: p.kind = "alloc"; break;
    }
    result.push_back(std::move(p));
  }
  return result;
}

namespace {

template <typename View>
Status CheckOne(const TensorInfo& sig, const View& view, const char* kind, size_t index, const hal::Device& device) {
  bool same_shape = view.shape.size() == sig.shape.size() &&
                    std::equal(view.shape.begin(), view.shape.end(), sig.shape.begin());
  if (view.element_type != sig.element_type || !same_shape)
    return InvalidArgumentError(kind, " ", index, " '", sig.name, "' expects ",
                                DescribeTensor(sig.element_type, Span<const int64_t>(sig.shape)), ", got ",
                                DescribeTensor(view.element_type, view.shape));
  if (view.data == nullptr && sig.byte_size != 0)
    return InvalidArgumentError(kind, " ", index, " '", sig.name, "' has no data");
  uint64_t element = ElementTypeSize(sig.element_type);
  uint64_t alignment = device.BoundMemoryAlignment(element);
  if (view.location == MemoryLocation::kDevice && alignment > 1 &&
      reinterpret_cast<uintptr_t>(view.data) % alignment != 0) {
    if (alignment == element)
      return InvalidArgumentError(kind, " ", index, " '", sig.name, "' is device memory at an address not aligned to ",
                                  "its ", element, "-byte elements; kernels read device memory in place");
    return InvalidArgumentError(kind, " ", index, " '", sig.name, "' is device memory at an address not aligned to ",
                                alignment, " bytes, which device '", device.name(),
                                "' needs of memory kernels read in place (they access several elements at once)");
  }
  return Status::Ok();
}

bool Overlap(const void* a, uint64_t a_len, const void* b, uint64_t b_len) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_len > 0 && b_len > 0 && x < y + b_len && y < x + a_len;
}

// Whether two views share bytes. Device and host pointers are compared as they are: CUDA's
// unified addressing keeps device allocations apart from process memory, and on the host
// device they are the same memory.
template <typename A, typename B>
bool ViewsOverlap(const A& a, uint64_t a_len, const B& b, uint64_t b_len) {
  return Overlap(a.data, a_len, b.data, b_len);
}

}  // namespace

Status Session::CheckBindings(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) const {
  const std::string& name = info_->function->name()->str();
  if (inputs.size() != info_->inputs.size())
    return InvalidArgumentError("function '", name, "' takes ", info_->inputs.size(), " inputs, got ",
                                inputs.size());
  if (outputs.size() != info_->outputs.size())
    return InvalidArgumentError("function '", name, "' returns ", info_->outputs.size(), " outputs, got ",
                                outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    HEXIR_RETURN_IF_ERROR(CheckOne(info_->inputs[i], inputs[i], "input", i, module_.device()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    HEXIR_RETURN_IF_ERROR(CheckOne(info_->outputs[i], outputs[i], "output", i, module_.device()));
    // Kernels write outputs while they may still read inputs: they must not share memory,
    // except an output bound exactly onto the donated input it is tied to (in place).
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (!ViewsOverlap(outputs[i], info_->outputs[i].byte_size, inputs[j], info_->inputs[j].byte_size)) continue;
      if (info_->outputs[i].tied_input == static_cast<int>(j) && outputs[i].data == inputs[j].data) continue;
      return InvalidArgumentError("output ", i, " '", info_->outputs[i].name, "' overlaps input ", j, " '",
                                  info_->inputs[j].name, "'; give outputs their own buffers",
                                  info_->outputs[i].tied_input == static_cast<int>(j)
                                      ? " or bind it exactly onto that input" : "");
    }
    for (size_t j = 0; j < i; ++j)
      if (ViewsOverlap(outputs[i], info_->outputs[i].byte_size, outputs[j], info_->outputs[j].byte_size))
        return InvalidArgumentError("outputs ", j, " and ", i, " overlap");
  }
  return Status::Ok();
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  if (running_.exchange(true, std::memory_order_acquire))
    return FailedPreconditionError(
        "Session::Run was called while another thread runs the same session; a session runs one request at a time "
        "(make one session per thread, or share a pool of sessions)");
  struct Done {
    std::atomic<bool>& running;
    ~Done() { running.store(false, std::memory_order_release); }
  } done{running_};
  HEXIR_RETURN_IF_ERROR(CheckBindings(inputs, outputs));
  last_device_ms_.reset();
  Status issued = Issue(inputs, outputs);
  // One wait for everything issued, also after a failure: work already on the queue must not
  // outlive Run (it may write the caller's device memory).
  Status waited = queue_->Synchronize();
  HEXIR_RETURN_IF_ERROR(issued);
  HEXIR_RETURN_IF_ERROR(waited);
  // Outputs that came back through pinned staging reach the caller now.
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].location == MemoryLocation::kHost)
      module_.device().CompleteHostOutput(outputs[i].data, info_->outputs[i].byte_size, output_pinned_[i].get());
  if (time_device_) {
    HEXIR_ASSIGN_OR_RETURN(last_device_ms_, queue_->TimedMilliseconds(hal::CommandQueue::TimingClock::kRun));
  }
  return Status::Ok();
}

Status Session::Issue(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  using TimingClock = hal::CommandQueue::TimingClock;
  if (time_device_) HEXIR_RETURN_IF_ERROR(queue_->BeginTiming(TimingClock::kRun));
  if (graph_ == nullptr) {
    HEXIR_RETURN_IF_ERROR(IssueCommands(inputs, outputs, *queue_));
  } else {
    graph_->BeginPass();
    Status recorded = IssueCommands(inputs, outputs, *graph_);
    Status ended = graph_->EndPass();
    HEXIR_RETURN_IF_ERROR(recorded);
    HEXIR_RETURN_IF_ERROR(ended);
    HEXIR_RETURN_IF_ERROR(graph_->Launch(*queue_));
  }
  if (time_device_) HEXIR_RETURN_IF_ERROR(queue_->EndTiming(TimingClock::kRun));
  hal::Device& device = module_.device();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].location == MemoryLocation::kHost)
      HEXIR_RETURN_IF_ERROR(device.FinishHostOutput(outputs[i].data, info_->outputs[i].byte_size,
                                                    output_staging_[i].get(), output_pinned_[i].get(), *queue_));
  return Status::Ok();
}

Status Session::IssueCommands(Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                              hal::CommandQueue& queue) {
  // The device decides how a caller's buffer reaches kernels (the host binds it in place when
  // aligned to its element size, else copies it into the staging made at Create()).
  hal::Device& device = module_.device();
  // Device memory the caller holds is bound as it is.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& in = info_->inputs[i];
    if (inputs[i].location == MemoryLocation::kDevice) {
      input_bases_[i] = const_cast<void*>(inputs[i].data);
      continue;
    }
    HEXIR_ASSIGN_OR_RETURN(input_bases_[i], device.BindHostInput(inputs[i].data, in.byte_size,
                                                                 ElementTypeSize(in.element_type),
                                                                 input_staging_[i].get(), input_pinned_[i].get(),
                                                                 queue));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].location == MemoryLocation::kDevice) {
      output_bases_[i] = outputs[i].data;
      continue;
    }
    HEXIR_ASSIGN_OR_RETURN(output_bases_[i], device.BindHostOutput(outputs[i].data, info_->outputs[i].byte_size,
                                                                   output_staging_[i].get()));
  }
  SpaceBases bases;
  bases.arenas = arena_bases_.data();
  bases.constants = module_.constants();
  bases.filled_constants = module_.filled_constants();
  bases.inputs = input_bases_.data();
  bases.outputs = output_bases_.data();
  // A run that fails part-way still counts (its commands' times were added).
  if (!command_ms_.empty()) ++profiled_runs_;
  return Execute(module_, *info_->function, bases, bindings_, queue, command_ms_.empty() ? nullptr : command_ms_.data(),
                 poison_, &profile_device_clock_);
}

}  // namespace hexir::vm

#include "vm/session.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "vm/interpreter.h"

namespace hexir::vm {

namespace {

// The name list of a session's functions, for messages: 'a' or 'a', 'b'.
std::string FunctionNames(const std::vector<const FunctionInfo*>& infos) {
  std::string names;
  for (const FunctionInfo* info : infos) names += (names.empty() ? "'" : ", '") + info->function->name()->str() + "'";
  return names;
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Create(const Module& module, const SessionOptions& options) {
  namespace fb = serializer::fb;
  // The default function first, then the others named, each once.
  std::vector<const FunctionInfo*> infos;
  // A model function compiled as shape buckets (--dim) is no function itself: its buckets are
  // the session's functions, smallest first.
  std::optional<BucketGroup> buckets;
  StatusOr<const FunctionInfo*> first = module.FindFunction(options.function);
  if (first.ok()) {
    infos.push_back(*first);
  } else {
    buckets = FindBucketGroup(module, options.function);
    if (!buckets) return first.status();
    for (const BucketGroup::Member& m : buckets->members) infos.push_back(m.info);
  }
  for (const std::string& name : options.functions) {
    HEXIR_ASSIGN_OR_RETURN(const FunctionInfo* info, module.FindFunction(name));
    if (std::find(infos.begin(), infos.end(), info) == infos.end()) infos.push_back(info);
  }
  std::unique_ptr<Session> session(new Session(module));
  hal::Device& device = module.device();
  // Every function's arenas share the session's: one buffer per arena position (the executable's
  // memory space, and which of the function's arenas in that space), as large and as aligned
  // as the largest function needs. (On the host several of the executable's spaces are one
  // device space, so the device's space alone cannot be the key.)
  struct Shared {
    uint64_t bytes = 0, alignment = 1;
    uint32_t device_space = 0;
    size_t index = 0;  // into arenas_
  };
  std::map<std::pair<uint32_t, uint32_t>, Shared> shared;
  auto positions = [](const fb::Function& fn) {
    std::vector<std::pair<uint32_t, uint32_t>> keys;
    std::map<uint32_t, uint32_t> seen;
    for (const fb::Arena* arena : *fn.arenas()) keys.push_back({arena->memory_space(), seen[arena->memory_space()]++});
    return keys;
  };
  for (const FunctionInfo* info : infos) {
    std::vector<std::pair<uint32_t, uint32_t>> keys = positions(*info->function);
    for (size_t a = 0; a < keys.size(); ++a) {
      const fb::Arena* arena = info->function->arenas()->Get(static_cast<uint32_t>(a));
      Shared& s = shared[keys[a]];
      s.bytes = std::max<uint64_t>(s.bytes, arena->bytes());
      s.alignment = std::max<uint64_t>(s.alignment, arena->alignment());
      s.device_space = module.device_memory_space(arena->memory_space());
    }
  }
  // Before allocating: the session's memory against its limit and against what the device
  // has free, so a model that does not fit says so with the numbers. Staging lives where each
  // function's first arena does (the memory its kernels use).
  auto staging_space_of = [&](const fb::Function& fn) {
    return module.device_memory_space(fn.arenas()->size() > 0 ? fn.arenas()->Get(0)->memory_space() : 0);
  };
  std::vector<uint64_t> space_bytes(device.allocator().memory_spaces().size(), 0);
  uint64_t arena_total = 0, staging_total = 0;
  for (const auto& [key, s] : shared) {
    space_bytes[s.device_space] += s.bytes;
    arena_total += s.bytes;
  }
  for (const FunctionInfo* info : infos) {
    const fb::Function& fn = *info->function;
    uint32_t staging_space = staging_space_of(fn);
    uint64_t staging = 0;
    for (const TensorInfo& in : info->inputs)
      if (device.NeedsInputStaging(ElementTypeSize(in.element_type))) staging += in.byte_size;
    for (const TensorInfo& out : info->outputs)
      if (device.NeedsOutputStaging()) staging += out.byte_size;
    space_bytes[staging_space] += staging;
    staging_total += staging;
  }
  uint64_t total = arena_total + staging_total;
  std::string what = infos.size() == 1 ? "a session of function " + FunctionNames(infos)
                                       : "a session of functions " + FunctionNames(infos);
  if (options.memory_limit_bytes != 0 && total > options.memory_limit_bytes)
    return ResourceExhaustedError(what, " needs ", total, " bytes of device memory (arenas ", arena_total, ", staging ",
                                  staging_total, "), over its limit of ", options.memory_limit_bytes,
                                  " bytes (SessionOptions::memory_limit_bytes)");
  for (uint32_t space = 0; space < space_bytes.size(); ++space) {
    if (space_bytes[space] == 0) continue;
    StatusOr<uint64_t> free_bytes = device.allocator().AvailableBytes(space);
    if (free_bytes.ok() && space_bytes[space] > *free_bytes)
      return ResourceExhaustedError(what, " needs ", space_bytes[space], " bytes in memory space '",
                                    device.allocator().memory_spaces()[space].name, "' of device '", device.name(),
                                    "', which reports ", *free_bytes, " bytes free");
  }
  for (auto& [key, s] : shared) {
    hal::BufferPtr buffer;
    if (s.bytes > 0) {
      HEXIR_ASSIGN_OR_RETURN(buffer, device.allocator().Allocate(s.device_space, s.bytes, s.alignment));
    }
    s.index = session->arenas_.size();
    session->arenas_.push_back(std::move(buffer));
  }
  size_t arity = 0;
  bool graphs = options.graphs == SessionOptions::Graphs::kOn ||
                (options.graphs == SessionOptions::Graphs::kAuto && device.PrefersGraphs());
  for (const FunctionInfo* info : infos) {
    const fb::Function& fn = *info->function;
    FunctionState f;
    f.info = info;
    for (const auto& key : positions(fn)) {
      const hal::BufferPtr& buffer = session->arenas_[shared[key].index];
      f.arena_bases.push_back(buffer ? buffer->data() : nullptr);
    }
    uint32_t staging_space = staging_space_of(fn);
    // A tensor's device staging (where the device asks for it) and the pinned host memory its
    // copies go through.
    auto stage = [&](const TensorInfo& t, bool needed, std::vector<hal::BufferPtr>& staging_list,
                     std::vector<hal::HostStagingPtr>& pinned_list) -> Status {
      hal::BufferPtr staging;
      hal::HostStagingPtr pinned;
      if (needed && t.byte_size > 0) {
        HEXIR_ASSIGN_OR_RETURN(staging, device.allocator().Allocate(staging_space, t.byte_size, 64));
        HEXIR_ASSIGN_OR_RETURN(pinned, device.AllocateHostStaging(t.byte_size));
      }
      staging_list.push_back(std::move(staging));
      pinned_list.push_back(std::move(pinned));
      return Status::Ok();
    };
    for (const TensorInfo& in : info->inputs)
      HEXIR_RETURN_IF_ERROR(stage(in, device.NeedsInputStaging(ElementTypeSize(in.element_type)), f.input_staging,
                                  f.input_pinned));
    for (const TensorInfo& out : info->outputs)
      HEXIR_RETURN_IF_ERROR(stage(out, device.NeedsOutputStaging(), f.output_staging, f.output_pinned));
    f.input_bases.resize(info->inputs.size());
    f.output_bases.resize(info->outputs.size());
    arity = std::max(arity, MaxDispatchArity(fn));
    if (options.profile) f.command_ms.assign(fn.commands()->size(), 0.0);
    // A function with control flow reads its conditions back mid-run: it runs on the queue.
    if (graphs && !options.profile && !HasControlFlow(fn)) {
      HEXIR_ASSIGN_OR_RETURN(f.graph, device.CreateGraph());
    }
    session->functions_.push_back(std::move(f));
  }
  session->bindings_.resize(arity);
  if (buckets) {
    Padding& pad = session->padding_;
    const std::vector<TensorInfo>& ins = infos.front()->inputs;
    const std::vector<TensorInfo>& outs = infos.front()->outputs;
    pad.inputs.resize(ins.size());
    pad.outputs.resize(outs.size());
    size_t rank = 0;
    for (const BucketGroup::Member& m : buckets->members) {
      for (size_t i = 0; i < ins.size(); ++i)
        pad.inputs[i].resize(std::max<size_t>(pad.inputs[i].size(), m.info->inputs[i].byte_size));
      for (size_t o = 0; o < outs.size(); ++o) {
        pad.outputs[o].resize(std::max<size_t>(pad.outputs[o].size(), m.info->outputs[o].byte_size));
        rank = std::max(rank, m.info->outputs[o].shape.size());
      }
    }
    pad.input_views.resize(ins.size());
    pad.output_views.resize(outs.size());
    pad.actual.reserve(buckets->dims.size());
    pad.shape.reserve(rank);
    session->buckets_ = std::move(buckets);
  }
  HEXIR_ASSIGN_OR_RETURN(session->queue_, device.CreateQueue());
  session->time_device_ = options.time_device;
  session->poison_ = options.poison;
  return session;
}

Session::~Session() = default;

uint64_t Session::arena_bytes() const {
  uint64_t bytes = 0;
  for (const hal::BufferPtr& arena : arenas_)
    if (arena) bytes += arena->size();
  return bytes;
}

GraphStats Session::graph_stats() const {
  GraphStats stats;
  for (const FunctionState& f : functions_) {
    if (f.graph == nullptr) continue;
    stats.enabled = true;
    stats.instantiations += f.graph->stats().instantiations;
    stats.node_updates += f.graph->stats().node_updates;
    stats.launches += f.graph->stats().launches;
  }
  return stats;
}

std::vector<CommandProfile> Session::profile() const {
  namespace fb = serializer::fb;
  std::vector<CommandProfile> result;
  const FunctionState& f = functions_.front();
  if (f.command_ms.empty()) return result;
  const auto* libraries = module_.view().executable().libraries();
  uint32_t index = 0;
  for (const fb::Command* cmd : *f.info->function->commands()) {
    CommandProfile p;
    p.index = index;
    p.total_ms = f.command_ms[index++];
    p.runs = f.profiled_runs;
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
      case fb::CommandOp::LoopCommand: p.kind = "loop"; break;
      case fb::CommandOp::IfCommand: p.kind = "if"; break;
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

Status Session::CheckBindings(const FunctionState& f, Span<const TensorView> inputs,
                              Span<const MutableTensorView> outputs) const {
  const FunctionInfo* info = f.info;
  const std::string& name = info->function->name()->str();
  if (inputs.size() != info->inputs.size())
    return InvalidArgumentError("function '", name, "' takes ", info->inputs.size(), " inputs, got ",
                                inputs.size());
  if (outputs.size() != info->outputs.size())
    return InvalidArgumentError("function '", name, "' returns ", info->outputs.size(), " outputs, got ",
                                outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    HEXIR_RETURN_IF_ERROR(CheckOne(info->inputs[i], inputs[i], "input", i, module_.device()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    HEXIR_RETURN_IF_ERROR(CheckOne(info->outputs[i], outputs[i], "output", i, module_.device()));
    // Kernels write outputs while they may still read inputs: they must not share memory,
    // except an output bound exactly onto the donated input it is tied to (in place).
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (!ViewsOverlap(outputs[i], info->outputs[i].byte_size, inputs[j], info->inputs[j].byte_size)) continue;
      if (info->outputs[i].tied_input == static_cast<int>(j) && outputs[i].data == inputs[j].data) continue;
      return InvalidArgumentError("output ", i, " '", info->outputs[i].name, "' overlaps input ", j, " '",
                                  info->inputs[j].name, "'; give outputs their own buffers",
                                  info->outputs[i].tied_input == static_cast<int>(j)
                                      ? " or bind it exactly onto that input" : "");
    }
    for (size_t j = 0; j < i; ++j)
      if (ViewsOverlap(outputs[i], info->outputs[i].byte_size, outputs[j], info->outputs[j].byte_size))
        return InvalidArgumentError("outputs ", j, " and ", i, " overlap");
  }
  return Status::Ok();
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs, const RunOptions* control) {
  if (buckets_) return RunBuckets(inputs, outputs, control);
  return RunFunction(functions_.front(), inputs, outputs, control);
}

Status Session::Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                    const RunOptions* control) {
  if (buckets_ && buckets_->name == function) return RunBuckets(inputs, outputs, control);
  for (FunctionState& f : functions_)
    if (f.info->function->name()->string_view() == function) return RunFunction(f, inputs, outputs, control);
  std::string names;
  for (const FunctionState& f : functions_) names += (names.empty() ? "" : ", ") + f.info->function->name()->str();
  return NotFoundError("function '", function, "' is not one this session runs (it runs: ", names,
                       "); name it in SessionOptions::functions");
}

namespace {

// Holds a session's one run at a time: a second thread's Run is refused at once. While held,
// the session's control is the run's RunOptions.
class RunTurn {
 public:
  RunTurn(std::atomic<bool>& running, const RunOptions*& control_slot, const RunOptions* control)
      : running_(running), control_slot_(control_slot), held_(!running.exchange(true, std::memory_order_acquire)) {
    if (held_) control_slot_ = control;
  }
  ~RunTurn() {
    if (!held_) return;
    control_slot_ = nullptr;
    running_.store(false, std::memory_order_release);
  }
  Status status() const {
    if (held_) return Status::Ok();
    return FailedPreconditionError(
        "Session::Run was called while another thread runs the same session; a session runs one request at a time "
        "(make one session per thread, or share a pool of sessions)");
  }

 private:
  std::atomic<bool>& running_;
  const RunOptions*& control_slot_;
  bool held_;
};

uint64_t ViewBytes(ElementType type, Span<const int64_t> shape) {
  uint64_t bytes = ElementTypeSize(type);
  for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
  return bytes;
}

}  // namespace

Status Session::RunFunction(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                            const RunOptions* control) {
  RunTurn turn(running_, control_, control);
  HEXIR_RETURN_IF_ERROR(turn.status());
  return RunHeld(f, inputs, outputs);
}

Status Session::RunBuckets(Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                           const RunOptions* control) {
  RunTurn turn(running_, control_, control);
  HEXIR_RETURN_IF_ERROR(turn.status());
  const BucketGroup& group = *buckets_;
  HEXIR_ASSIGN_OR_RETURN(BucketChoice choice, ChooseBucket(group, inputs, padding_.actual));
  FunctionState& f = functions_[choice.member];
  if (choice.exact) return RunHeld(f, inputs, outputs);
  // Padded: the caller's tensors are copied into and out of host memory of the bucket's shape.
  const FunctionInfo& info = *f.info;
  const std::string& bucket = info.function->name()->str();
  if (outputs.size() != info.outputs.size())
    return InvalidArgumentError("function '", group.name, "' returns ", info.outputs.size(), " outputs, got ",
                                outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].element_type != info.inputs[i].element_type)
      return InvalidArgumentError("input ", i, " '", info.inputs[i].name, "' expects ",
                                  ElementTypeName(info.inputs[i].element_type), ", got ",
                                  ElementTypeName(inputs[i].element_type));
    if (inputs[i].location != MemoryLocation::kHost)
      return InvalidArgumentError("input ", i, " '", info.inputs[i].name, "' is device memory whose shape no bucket of '",
                                  group.name, "' has exactly: device memory is bound in place, so only an exact ",
                                  "bucket takes it (the nearest is '", bucket, "'); pass host memory to be padded");
    if (inputs[i].data == nullptr && info.inputs[i].byte_size != 0)
      return InvalidArgumentError("input ", i, " '", info.inputs[i].name, "' has no data");
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    BucketOutputShape(group, choice.member, o, padding_.actual, padding_.shape);
    bool same = outputs[o].shape.size() == padding_.shape.size() &&
                std::equal(padding_.shape.begin(), padding_.shape.end(), outputs[o].shape.begin());
    if (!same || outputs[o].element_type != info.outputs[o].element_type)
      return InvalidArgumentError("output ", o, " '", info.outputs[o].name, "' expects ",
                                  DescribeTensor(info.outputs[o].element_type, Span<const int64_t>(padding_.shape)),
                                  " for these inputs, got ", DescribeTensor(outputs[o].element_type, outputs[o].shape));
    if (outputs[o].location != MemoryLocation::kHost)
      return InvalidArgumentError("output ", o, " '", info.outputs[o].name, "' is device memory, but the run pads to ",
                                  "bucket '", bucket, "': only an exact bucket writes device memory in place");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    unsigned char* scratch = padding_.inputs[i].data();
    uint64_t bytes = ViewBytes(inputs[i].element_type, inputs[i].shape), full = info.inputs[i].byte_size;
    // Padded along the leading axis only (vm/buckets.h): the caller's rows, then zero rows.
    if (bytes > 0) std::memcpy(scratch, inputs[i].data, bytes);
    std::memset(scratch + bytes, 0, full - bytes);
    padding_.input_views[i] = {scratch, info.inputs[i].element_type, Span<const int64_t>(info.inputs[i].shape)};
  }
  for (size_t o = 0; o < outputs.size(); ++o)
    padding_.output_views[o] = {padding_.outputs[o].data(), info.outputs[o].element_type,
                                Span<const int64_t>(info.outputs[o].shape)};
  HEXIR_RETURN_IF_ERROR(RunHeld(f, Span<const TensorView>(padding_.input_views),
                                Span<const MutableTensorView>(padding_.output_views)));
  for (size_t o = 0; o < outputs.size(); ++o) {
    uint64_t bytes = ViewBytes(outputs[o].element_type, outputs[o].shape);
    if (bytes > 0) std::memcpy(outputs[o].data, padding_.outputs[o].data(), bytes);
  }
  return Status::Ok();
}

StatusOr<std::vector<std::vector<int64_t>>> Session::OutputShapes(Span<const TensorView> inputs) const {
  std::vector<std::vector<int64_t>> shapes;
  if (!buckets_) {
    for (const TensorInfo& out : info().outputs) shapes.push_back(out.shape);
    return shapes;
  }
  std::vector<int64_t> actual;
  HEXIR_ASSIGN_OR_RETURN(BucketChoice choice, ChooseBucket(*buckets_, inputs, actual));
  for (size_t o = 0; o < functions_[choice.member].info->outputs.size(); ++o) {
    shapes.emplace_back();
    BucketOutputShape(*buckets_, choice.member, o, actual, shapes.back());
  }
  return shapes;
}

Status Session::RunHeld(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  HEXIR_RETURN_IF_ERROR(CheckBindings(f, inputs, outputs));
  last_device_ms_.reset();
  Status issued = Issue(f, inputs, outputs);
  // One wait for everything issued, also after a failure: work already on the queue must not
  // outlive Run (it may write the caller's device memory).
  Status waited = queue_->Synchronize();
  HEXIR_RETURN_IF_ERROR(issued);
  HEXIR_RETURN_IF_ERROR(waited);
  // Outputs that came back through pinned staging reach the caller now.
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].location == MemoryLocation::kHost)
      module_.device().CompleteHostOutput(outputs[i].data, f.info->outputs[i].byte_size, f.output_pinned[i].get());
  if (time_device_) {
    HEXIR_ASSIGN_OR_RETURN(last_device_ms_, queue_->TimedMilliseconds(hal::CommandQueue::TimingClock::kRun));
  }
  return Status::Ok();
}

Status Session::Issue(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  using TimingClock = hal::CommandQueue::TimingClock;
  if (time_device_) HEXIR_RETURN_IF_ERROR(queue_->BeginTiming(TimingClock::kRun));
  if (f.graph == nullptr) {
    HEXIR_RETURN_IF_ERROR(IssueCommands(f, inputs, outputs, *queue_));
  } else {
    // A graph has no loops: its run is bounded, and checked once before it starts.
    HEXIR_RETURN_IF_ERROR(CheckRunControl(control_, 0));
    f.graph->BeginPass();
    Status recorded = IssueCommands(f, inputs, outputs, *f.graph);
    Status ended = f.graph->EndPass();
    HEXIR_RETURN_IF_ERROR(recorded);
    HEXIR_RETURN_IF_ERROR(ended);
    HEXIR_RETURN_IF_ERROR(f.graph->Launch(*queue_));
  }
  if (time_device_) HEXIR_RETURN_IF_ERROR(queue_->EndTiming(TimingClock::kRun));
  hal::Device& device = module_.device();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].location == MemoryLocation::kHost)
      HEXIR_RETURN_IF_ERROR(device.FinishHostOutput(outputs[i].data, f.info->outputs[i].byte_size,
                                                    f.output_staging[i].get(), f.output_pinned[i].get(), *queue_));
  return Status::Ok();
}

Status Session::IssueCommands(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                              hal::CommandQueue& queue) {
  const FunctionInfo* info = f.info;
  // The device decides how a caller's buffer reaches kernels (the host binds it in place when
  // aligned to its element size, else copies it into the staging made at Create()).
  hal::Device& device = module_.device();
  // Device memory the caller holds is bound as it is.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& in = info->inputs[i];
    if (inputs[i].location == MemoryLocation::kDevice) {
      f.input_bases[i] = const_cast<void*>(inputs[i].data);
      continue;
    }
    HEXIR_ASSIGN_OR_RETURN(f.input_bases[i], device.BindHostInput(inputs[i].data, in.byte_size,
                                                                  ElementTypeSize(in.element_type),
                                                                  f.input_staging[i].get(), f.input_pinned[i].get(),
                                                                  queue));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].location == MemoryLocation::kDevice) {
      f.output_bases[i] = outputs[i].data;
      continue;
    }
    HEXIR_ASSIGN_OR_RETURN(f.output_bases[i], device.BindHostOutput(outputs[i].data, info->outputs[i].byte_size,
                                                                    f.output_staging[i].get()));
  }
  SpaceBases bases;
  bases.arenas = f.arena_bases.data();
  bases.constants = module_.constants();
  bases.filled_constants = module_.filled_constants();
  bases.inputs = f.input_bases.data();
  bases.outputs = f.output_bases.data();
  // A run that fails part-way still counts (its commands' times were added).
  if (!f.command_ms.empty()) ++f.profiled_runs;
  return Execute(module_, *info->function, bases, bindings_, queue, f.command_ms.empty() ? nullptr : f.command_ms.data(),
                 poison_, &profile_device_clock_, f.graph == nullptr ? control_ : nullptr);
}

}  // namespace hexir::vm

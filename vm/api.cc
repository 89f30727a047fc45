// The public runtime API (include/hexir/*.h) over the VM and the HAL.
#include <utility>

#include "hal/driver_registry.h"
#include "hexir/module.h"
#include "hexir/runtime.h"
#include "hexir/session.h"
#include "vm/module.h"
#include "vm/session.h"

namespace hexir {

Runtime::Runtime(std::unique_ptr<hal::Device> device, std::string name)
    : device_(std::move(device)), device_name_(std::move(name)) {}
Runtime::~Runtime() = default;
uint64_t Runtime::live_buffers() const { return device_->allocator().live_buffers(); }
uint64_t Runtime::live_bytes() const { return device_->allocator().live_bytes(); }

StatusOr<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeOptions& options) {
  if (options.threads < 0) return InvalidArgumentError("threads must be 0 (every core) or more, got ", options.threads);
  // The driver registry knows the devices of this build ("host", "cpu", "cuda").
  hal::DeviceOptions device_options;
  device_options.name = options.device;
  device_options.threads = options.threads;
  HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<hal::Device> device,
                         hal::DriverRegistry::Default().CreateDevice(device_options));
  std::string name = device->name();
  return std::unique_ptr<Runtime>(new Runtime(std::move(device), std::move(name)));
}

Module::Module(std::unique_ptr<vm::Module> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;

StatusOr<std::shared_ptr<const Module>> Module::Load(const Runtime& runtime, const std::string& path,
                                                     const ModuleOptions& options) {
  HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<vm::Module> impl, vm::Module::Load(path, &runtime.device(), options));
  return std::shared_ptr<const Module>(new Module(std::move(impl)));
}

std::vector<std::string> Module::function_names() const {
  std::vector<std::string> names;
  for (const vm::FunctionInfo& f : impl_->functions()) names.push_back(f.function->name()->str());
  return names;
}

namespace {

// A function, or for a model compiled as shape buckets the smallest bucket.
StatusOr<const vm::FunctionInfo*> FunctionOrBucket(const vm::Module& module, const std::string& function) {
  StatusOr<const vm::FunctionInfo*> f = module.FindFunction(function);
  if (f.ok()) return f;
  std::optional<vm::BucketGroup> group = vm::FindBucketGroup(module, function);
  if (!group) return f.status();
  return group->members.front().info;
}

}  // namespace

StatusOr<std::vector<TensorInfo>> Module::inputs(const std::string& function) const {
  HEXIR_ASSIGN_OR_RETURN(const vm::FunctionInfo* f, FunctionOrBucket(*impl_, function));
  return f->inputs;
}

StatusOr<std::vector<TensorInfo>> Module::outputs(const std::string& function) const {
  HEXIR_ASSIGN_OR_RETURN(const vm::FunctionInfo* f, FunctionOrBucket(*impl_, function));
  return f->outputs;
}

uint64_t Module::file_bytes() const { return impl_->file_bytes(); }

StatusOr<std::string> Module::plan_json(const std::string& function) const {
  HEXIR_ASSIGN_OR_RETURN(const vm::FunctionInfo* f, impl_->FindFunction(function));
  return f->function->plan_json() ? f->function->plan_json()->str() : std::string("{}");
}

uint64_t Module::constant_bytes() const {
  return impl_->view().constants().size() + impl_->view().executable().filled_constants_bytes();
}

std::vector<std::pair<std::string, std::string>> Module::metadata() const {
  std::vector<std::pair<std::string, std::string>> entries;
  if (const auto* metadata = impl_->view().executable().metadata())
    for (const auto* entry : *metadata)
      entries.push_back({entry->key()->str(), entry->value() ? entry->value()->str() : std::string()});
  return entries;
}

std::string Module::rows_mixed_by(const std::string& function) const {
  std::optional<vm::BucketGroup> group = vm::FindBucketGroup(*impl_, function);
  return group ? vm::RowsMixedBy(*group) : std::string();
}

Session::Session(std::shared_ptr<const Module> module, std::unique_ptr<vm::Session> impl)
    : module_(std::move(module)), impl_(std::move(impl)) {}
Session::~Session() = default;

StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Module> module,
                                                   const std::string& function) {
  SessionOptions options;
  options.function = function;
  return Create(std::move(module), options);
}

StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Module> module,
                                                   const SessionOptions& options) {
  if (module == nullptr) return InvalidArgumentError("Session::Create needs a loaded module");
  HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<vm::Session> impl, vm::Session::Create(module->impl(), options));
  return std::unique_ptr<Session>(new Session(std::move(module), std::move(impl)));
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  return impl_->Run(inputs, outputs);
}

StatusOr<std::vector<std::vector<int64_t>>> Session::OutputShapes(Span<const TensorView> inputs) const {
  return impl_->OutputShapes(inputs);
}

Status Session::Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  return impl_->Run(function, inputs, outputs);
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs, const RunOptions& options) {
  return impl_->Run(inputs, outputs, &options);
}

Status Session::Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                    const RunOptions& options) {
  return impl_->Run(function, inputs, outputs, &options);
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->info().inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->info().outputs; }
uint64_t Session::arena_bytes() const { return impl_->arena_bytes(); }
std::optional<double> Session::last_device_ms() const { return impl_->last_device_ms(); }
std::vector<CommandProfile> Session::profile() const { return impl_->profile(); }
GraphStats Session::graph_stats() const { return impl_->graph_stats(); }

}  // namespace hexir

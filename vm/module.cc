#include "vm/module.h"

#include "base/alignment.h"
#include "hal/host/cpu_features.h"

namespace hexir::vm {

namespace {

std::vector<TensorInfo> Describe(const flatbuffers::Vector<flatbuffers::Offset<serializer::fb::TensorSignature>>& sigs) {
  std::vector<TensorInfo> out;
  for (const auto* sig : sigs) {
    TensorInfo info;
    info.name = sig->name()->str();
    info.element_type = static_cast<ElementType>(sig->element_type());
    info.shape.assign(sig->shape()->begin(), sig->shape()->end());
    info.byte_size = serializer::ExecutableView::TensorBytes(*sig);
    info.donated = sig->donated();
    info.tied_input = sig->tied_input();
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Module>> Module::Load(const std::string& path, hal::Device* device,
                                               const ModuleOptions& options) {
  HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<FileMapping> mapping, options.load_mode == LoadMode::kCopy
                                                                   ? FileMapping::Copy(path)
                                                                   : FileMapping::Open(path));
  serializer::ReadOptions read_options;
  read_options.verify_constants = options.verify_weights;
  auto view = serializer::ExecutableView::Open(mapping->bytes(), read_options);
  if (!view.ok()) return Status(view.status().code(), "'" + path + "': " + view.status().message());
  std::unique_ptr<Module> module(new Module(std::move(mapping), *view, device));

  const auto& exe = module->view_.executable();
  // Arenas and constants live in the target's memory spaces: the device must have each.
  for (const auto* space : *exe.memory_spaces())
    if (!device->HasMemorySpace(space->name()->str()))
      return FailedPreconditionError("'", path, "': compiled for target '", exe.target()->str(),
                                     "', whose memory space '", space->name()->str(), "' device '",
                                     device->name(), "' does not have; recompile with hexir-compile --target ",
                                     "for this device");
  for (uint32_t i = 0; i < exe.libraries()->size(); ++i) {
    const auto* lib = exe.libraries()->Get(i);
    std::vector<std::string> names;
    for (const auto* e : *lib->entries()) names.push_back(e->name()->str());
    hal::ExecutableFormat format = lib->format() == serializer::fb::KernelFormat::CudaPtx
                                       ? hal::ExecutableFormat::kCudaPtx
                                       : hal::ExecutableFormat::kHostElf;
    // Host code compiled for extensions this CPU lacks would crash on its first such
    // instruction: refuse it here.
    if (format == hal::ExecutableFormat::kHostElf && lib->cpu_features() != nullptr) {
      for (const auto* feature : *lib->cpu_features())
        if (!hal::HostCpuSupports(feature->str()))
          return FailedPreconditionError("'", path, "': its kernels need the CPU extension '", feature->str(),
                                         "', which this CPU lacks; recompile with hexir-compile --target-cpu ",
                                         "for this machine (e.g. --target-cpu=x86-64-v2)");
    }
    auto loaded = device->LoadExecutable(format, module->view_.section(lib->section()), names);
    if (!loaded.ok())
      return Status(loaded.status().code(), "'" + path + "': " + loaded.status().message());
    module->libraries_.push_back(std::move(*loaded));
  }
  // Host memory is device memory: the mapped (or copied) constants are used in place
  // (read-only; the reader guarantees nothing writes into the constant space).
  ByteSpan constants = module->view_.constants();
  module->constants_ = constants.empty() ? nullptr : const_cast<unsigned char*>(constants.data());
  // Splat constants: a few bytes in the file, filled once into device memory.
  if (uint64_t bytes = exe.filled_constants_bytes(); bytes > 0) {
    HEXIR_ASSIGN_OR_RETURN(module->filled_constants_, device->Allocate(bytes, 64));
    for (const auto* fill : *exe.constant_fills()) {
      auto* target = static_cast<unsigned char*>(module->filled_constants_) + fill->offset();
      HEXIR_RETURN_IF_ERROR(device->Fill(target, fill->length(), fill->pattern(), fill->pattern_length()));
    }
  }
  for (const serializer::fb::Function* fn : *exe.functions())
    module->functions_.push_back({fn, Describe(*fn->inputs()), Describe(*fn->outputs())});
  return module;
}

StatusOr<const FunctionInfo*> Module::FindFunction(const std::string& name) const {
  for (const FunctionInfo& f : functions_)
    if (f.function->name()->str() == name) return &f;
  std::string names;
  for (const FunctionInfo& f : functions_) names += (names.empty() ? "" : ", ") + f.function->name()->str();
  return NotFoundError("no function '", name, "' in the module (it has: ", names, ")");
}

Module::~Module() {
  if (filled_constants_ != nullptr) device_->Free(filled_constants_, view_.executable().filled_constants_bytes());
}

}  // namespace hexir::vm

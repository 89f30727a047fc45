#include "vm/module.h"

#include "base/alignment.h"
#include "base/half.h"

#include <vector>

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

// Widens the executable's f16/bf16 constants into the FilledConstant space at `filled` (device
// memory), through a bounded host buffer: the reader checked every range.
Status WidenConstants(hal::Device& device, const serializer::ExecutableView& view, hal::DevicePtr filled) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;  // values per copy (4 MiB)
  ByteSpan narrow = view.narrow_constants();
  std::vector<float> chunk;
  for (const auto* w : *view.executable().constant_widenings()) {
    auto format = static_cast<NarrowFloat>(w->format());
    for (uint64_t done = 0; done < w->count(); done += kChunk) {
      uint64_t n = std::min(kChunk, w->count() - done);
      chunk.resize(n);
      const uint8_t* source = narrow.data() + w->source() + done * 2;
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t bits = static_cast<uint16_t>(source[2 * i] | source[2 * i + 1] << 8);  // little-endian
        chunk[i] = NarrowBitsToFloat(bits, format);
      }
      void* target = static_cast<unsigned char*>(filled) + w->target() + done * 4;
      HEXIR_RETURN_IF_ERROR(device.queue().Copy(hal::CopyDirection::kHostToDevice, target, chunk.data(), n * 4));
      // The chunk is reused: the copy must have read it.
      HEXIR_RETURN_IF_ERROR(device.queue().Synchronize());
    }
  }
  return Status::Ok();
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
  for (const auto* space : *exe.memory_spaces()) {
    std::optional<uint32_t> found = device->MemorySpaceFor(space->name()->str(), space->host_visible());
    if (!found)
      return FailedPreconditionError("'", path, "': compiled for target '", exe.target()->str(),
                                     "', which needs memory space '", space->name()->str(), "'; device '",
                                     device->name(), "' has no such space (run it on a device of that target, ",
                                     "or recompile it with hexir-compile --target for this device)");
    module->device_spaces_.push_back(*found);
  }
  for (uint32_t i = 0; i < exe.libraries()->size(); ++i) {
    const auto* lib = exe.libraries()->Get(i);
    hal::ExecutableSource source;
    source.format = lib->format() == serializer::fb::KernelFormat::CudaPtx ? hal::ExecutableFormat::kCudaPtx
                                                                           : hal::ExecutableFormat::kHostElf;
    source.code = module->view_.section(lib->section());
    for (const auto* e : *lib->entries()) {
      source.entry_names.push_back(e->name()->str());
      const auto* size = e->workgroup_size();  // 3 sizes (the reader checked)
      source.workgroup_sizes.push_back({size->Get(0), size->Get(1), size->Get(2)});
    }
    if (lib->cpu_features() != nullptr)
      for (const auto* feature : *lib->cpu_features()) source.cpu_features.push_back(feature->str());
    source.compute_capability = lib->compute_capability();
    // The device checks the requirements (host: the CPU's extensions) before loading.
    auto loaded = device->LoadExecutable(source);
    if (!loaded.ok())
      return Status(loaded.status().code(), "'" + path + "': " + loaded.status().message());
    module->libraries_.push_back(std::move(*loaded));
  }
  // Constants, once, in their memory space (the host uses the mapped or copied bytes in place).
  uint32_t constants_space = module->device_spaces_[exe.constants_memory_space()];
  if (ByteSpan constants = module->view_.constants(); !constants.empty()) {
    HEXIR_ASSIGN_OR_RETURN(module->constants_, device->MakeResident(constants, constants_space));
  }
  // Splat constants (a few bytes in the file) and constants stored as f16 or bf16 (half the
  // bytes), made once into device memory.
  if (uint64_t bytes = exe.filled_constants_bytes(); bytes > 0) {
    HEXIR_ASSIGN_OR_RETURN(module->filled_constants_, device->allocator().Allocate(constants_space, bytes, 64));
    for (const auto* fill : *exe.constant_fills()) {
      auto* target = static_cast<unsigned char*>(module->filled_constants_->data()) + fill->offset();
      HEXIR_RETURN_IF_ERROR(device->queue().Fill(target, fill->length(), fill->pattern(), fill->pattern_length()));
    }
    if (exe.constant_widenings() != nullptr) {
      HEXIR_RETURN_IF_ERROR(WidenConstants(*device, module->view_, module->filled_constants_->data()));
    }
    HEXIR_RETURN_IF_ERROR(device->queue().Synchronize());
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

Module::~Module() = default;

}  // namespace hexir::vm

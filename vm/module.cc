#include "vm/module.h"

#include "base/alignment.h"

namespace hexir {

StatusOr<std::shared_ptr<const Module>> Module::Load(const std::string& path, hal::Device* device,
                                                     const ModuleOptions& options) {
  HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<FileMapping> mapping, FileMapping::Open(path));
  serializer::ReadOptions read_options;
  read_options.verify_constants = options.verify_weights;
  auto view = serializer::ExecutableView::Open(mapping->bytes(), read_options);
  if (!view.ok()) return Status(view.status().code(), "'" + path + "': " + view.status().message());
  std::shared_ptr<Module> module(new Module(std::move(mapping), *view, device));

  const auto& exe = module->view_.executable();
  for (uint32_t i = 0; i < exe.libraries()->size(); ++i) {
    const auto* lib = exe.libraries()->Get(i);
    std::vector<std::string> names;
    for (const auto* e : *lib->entries()) names.push_back(e->name()->str());
    hal::ExecutableFormat format = exe.sections()->Get(lib->section())->kind() == serializer::fb::SectionKind::CudaPtx
                                       ? hal::ExecutableFormat::kCudaPtx
                                       : hal::ExecutableFormat::kHostElf;
    auto loaded = device->LoadExecutable(format, module->view_.section(lib->section()), names);
    if (!loaded.ok())
      return Status(loaded.status().code(), "'" + path + "': " + loaded.status().message());
    module->libraries_.push_back(std::move(*loaded));
  }
  // Host memory is device memory: the mapped constants are used in place (read-only; the
  // reader guarantees nothing writes into the constant space).
  ByteSpan constants = module->view_.constants();
  module->constants_ = constants.empty() ? nullptr : const_cast<unsigned char*>(constants.data());
  return std::shared_ptr<const Module>(std::move(module));
}

Module::~Module() = default;

}  // namespace hexir

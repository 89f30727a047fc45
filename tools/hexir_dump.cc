// hexir-dump: prints what is inside a .hxb: signatures, sections, kernels, commands, slots.
#include <cstdio>
#include <string>
#include <vector>

#include "base/file_mapping.h"
#include "serializer/executable_spec.h"
#include "serializer/reader.h"
#include "tools/ptx_info.h"

namespace fb = hexir::serializer::fb;

namespace {

std::string Shape(const fb::TensorSignature& sig) {
  std::string s;
  for (int64_t d : *sig.shape()) s += (s.empty() ? "" : "x") + std::to_string(d);
  return (s.empty() ? "scalar" : s) + " " + hexir::serializer::ElementTypeName(sig.element_type());
}

std::string SlotText(const fb::Slot& slot) {
  std::string space = fb::EnumNameSlotKind(slot.kind());
  if (slot.kind() == fb::SlotKind::Input || slot.kind() == fb::SlotKind::Output || slot.kind() == fb::SlotKind::Arena)
    space += std::to_string(slot.index());
  return space + "[" + std::to_string(slot.offset()) + ", +" + std::to_string(slot.length()) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  // --ptx: also print the PTX text of CUDA kernel libraries.
  bool printPtx = argc == 3 && std::string(argv[1]) == "--ptx";
  if (printPtx) {
    argv[1] = argv[2];
    argc = 2;
  }
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("hexir-dump %s\n", HEXIR_VERSION);
    return 0;
  }
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fprintf(argc == 2 ? stdout : stderr, "usage: hexir-dump [--ptx] MODEL.hxb\n");
    return argc == 2 ? 0 : 1;
  }
  auto mapping = hexir::FileMapping::Open(argv[1]);
  if (!mapping.ok()) {
    std::fprintf(stderr, "hexir-dump: error: %s\n", mapping.status().message().c_str());
    return 1;
  }
  auto view = hexir::serializer::ExecutableView::Open((*mapping)->bytes(), {/*verify_constants=*/true});
  if (!view.ok()) {
    std::fprintf(stderr, "hexir-dump: error: '%s': %s\n", argv[1], view.status().message().c_str());
    return 1;
  }
  const fb::Executable& exe = view->executable();
  std::printf("executable: %s (format %u, %zu bytes, producer '%s')\n", argv[1], exe.format_version(),
              (*mapping)->bytes().size(), exe.producer() ? exe.producer()->c_str() : "");
  // What the model says of itself (ONNX metadata_props and the model's own fields), each value
  // on one line, cut at 200 characters.
  if (exe.metadata() != nullptr && exe.metadata()->size() > 0) {
    std::printf("metadata:\n");
    for (const auto* entry : *exe.metadata()) {
      std::string value = entry->value() ? entry->value()->str() : "";
      for (char& c : value)
        if (c == '\n' || c == '\r') c = ' ';
      if (value.size() > 200) value = value.substr(0, 200) + "...";
      std::printf("  %s: %s\n", entry->key()->c_str(), value.c_str());
    }
  }
  std::printf("sections:\n");
  for (uint32_t i = 0; i < exe.sections()->size(); ++i) {
    const fb::SectionRef* s = exe.sections()->Get(i);
    std::printf("  #%u %-10s offset %-10llu size %-10llu xxh3 %016llx\n", i, fb::EnumNameSectionKind(s->kind()),
                static_cast<unsigned long long>(s->offset()), static_cast<unsigned long long>(s->length()),
                static_cast<unsigned long long>(s->checksum()));
  }
  std::printf("target: %s; memory spaces:", exe.target()->c_str());
  for (uint32_t i = 0; i < exe.memory_spaces()->size(); ++i)
    std::printf(" %u %s", i, exe.memory_spaces()->Get(i)->name()->c_str());
  std::printf("; constants in %s\n", exe.memory_spaces()->Get(exe.constants_memory_space())->name()->c_str());
  if (exe.constant_fills() != nullptr && exe.constant_fills()->size() > 0) {
    std::printf("filled constants: %llu bytes, %u fills\n",
                static_cast<unsigned long long>(exe.filled_constants_bytes()), exe.constant_fills()->size());
    for (const fb::ConstantFill* f : *exe.constant_fills())
      std::printf("  [%llu, +%llu) pattern 0x%llx/%u\n", static_cast<unsigned long long>(f->offset()),
                  static_cast<unsigned long long>(f->length()), static_cast<unsigned long long>(f->pattern()),
                  f->pattern_length());
  }
  if (exe.constant_widenings() != nullptr && exe.constant_widenings()->size() > 0) {
    std::printf("widened constants: %u, %llu bytes stored narrow\n", exe.constant_widenings()->size(),
                static_cast<unsigned long long>(view->narrow_constants().size()));
    for (const fb::ConstantWidening* w : *exe.constant_widenings())
      std::printf("  [%llu, +%llu) from %s at %llu\n", static_cast<unsigned long long>(w->target()),
                  static_cast<unsigned long long>(w->count() * 4), w->format() == 0 ? "f16" : "bf16",
                  static_cast<unsigned long long>(w->source()));
  }
  for (uint32_t i = 0; i < exe.libraries()->size(); ++i) {
    const fb::KernelLibrary* lib = exe.libraries()->Get(i);
    std::string features;
    if (lib->cpu_features())
      for (const auto* f : *lib->cpu_features()) features += std::string(features.empty() ? "" : " ") + f->str();
    if (lib->format() == fb::KernelFormat::CudaPtx)
      std::printf("kernel library %u (%s, section #%u): %u entries; needs compute capability %u.%u\n", i,
                  fb::EnumNameKernelFormat(lib->format()), lib->section(), lib->entries()->size(),
                  lib->compute_capability() / 10, lib->compute_capability() % 10);
    else
      std::printf("kernel library %u (%s, section #%u): %u entries; needs CPU extensions: %s\n", i,
                  fb::EnumNameKernelFormat(lib->format()), lib->section(), lib->entries()->size(),
                  features.empty() ? "none" : features.c_str());
    bool ptx = lib->format() == fb::KernelFormat::CudaPtx;
    hexir::ByteSpan code = view->section(lib->section());
    std::string_view text(reinterpret_cast<const char*>(code.data()), code.size());
    std::map<std::string, hexir::tools::PtxEntryInfo> memory;
    if (ptx) memory = hexir::tools::ParsePtxEntries(text);
    for (uint32_t e = 0; e < lib->entries()->size(); ++e) {
      const fb::KernelEntry* entry = lib->entries()->Get(e);
      std::printf("  [%u] %s (arity %u, %u workgroups of %ux%ux%u, ", e, entry->name()->c_str(), entry->arity(),
                  entry->workgroups(), entry->workgroup_size()->Get(0), entry->workgroup_size()->Get(1),
                  entry->workgroup_size()->Get(2));
      if (ptx) {
        const hexir::tools::PtxEntryInfo& m = memory[entry->name()->str()];
        std::printf("shared memory %llu bytes, local memory %llu bytes per thread)\n",
                    static_cast<unsigned long long>(m.shared_bytes), static_cast<unsigned long long>(m.local_bytes));
      } else {
        std::printf("stack buffers %u bytes, workspace 0 bytes)\n", entry->stack_bytes());
      }
    }
    if (ptx && printPtx) std::printf("  PTX (%zu bytes):\n%.*s\n", text.size(), static_cast<int>(text.size()), text.data());
  }
  for (const fb::Function* fn : *exe.functions()) {
    std::printf("function %s", fn->name()->c_str());
    // A shape bucket (hexir-compile --dim): which model function, at which sizes.
    if (fn->bucket_of() != nullptr && fn->bucket_dims() != nullptr) {
      std::printf(" (shape bucket of %s:", fn->bucket_of()->c_str());
      for (const auto* d : *fn->bucket_dims())
        std::printf(" %s=%lld", d->name()->c_str(), static_cast<long long>(d->value()));
      std::printf(")");
    }
    std::printf("\n");
    // Buckets the runtime runs at their exact size only (never padded, never batched).
    if (fn->rows_mixed_by() != nullptr) std::printf("  rows interact: %s\n", fn->rows_mixed_by()->c_str());
    for (const auto* sig : *fn->inputs())
      std::printf("  input  %s: %s%s\n", sig->name()->c_str(), Shape(*sig).c_str(), sig->donated() ? " (donated)" : "");
    for (const auto* sig : *fn->outputs()) {
      std::printf("  output %s: %s", sig->name()->c_str(), Shape(*sig).c_str());
      // The donated input it may be bound onto (updated in place).
      if (sig->tied_input() >= 0 && static_cast<uint32_t>(sig->tied_input()) < fn->inputs()->size())
        std::printf(" (tied to input %s)", fn->inputs()->Get(static_cast<uint32_t>(sig->tied_input()))->name()->c_str());
      std::printf("\n");
    }
    for (uint32_t a = 0; a < fn->arenas()->size(); ++a) {
      const fb::Arena* arena = fn->arenas()->Get(a);
      std::printf("  arena %u: %llu bytes, align %u, memory space %s\n", a,
                  static_cast<unsigned long long>(arena->bytes()), arena->alignment(),
                  exe.memory_spaces()->Get(arena->memory_space())->name()->c_str());
    }
    std::printf("  commands (%u):\n", fn->commands()->size());
    uint32_t index = 0;
    std::vector<uint32_t> ends;  // where each open LOOP or IF body ends: the indentation
    for (const fb::Command* cmd : *fn->commands()) {
      while (!ends.empty() && ends.back() <= index) ends.pop_back();
      std::printf("    %3u %*s", index++, static_cast<int>(2 * ends.size()), "");
      switch (cmd->op_type()) {
        case fb::CommandOp::LoopCommand: {
          const auto* l = cmd->op_as_LoopCommand();
          std::printf("LOOP %u commands", l->body_length());
          if (l->max_trips() != 0) std::printf(", at most %llu trips", static_cast<unsigned long long>(l->max_trips()));
          if (l->trip_count()) std::printf(", trip count %s", SlotText(*l->trip_count()).c_str());
          if (l->condition()) std::printf(", while %s", SlotText(*l->condition()).c_str());
          if (l->iteration()) std::printf(", trip number -> %s", SlotText(*l->iteration()).c_str());
          std::printf("\n");
          ends.push_back(index + l->body_length());
          break;
        }
        case fb::CommandOp::IfCommand: {
          const auto* c = cmd->op_as_IfCommand();
          std::printf("IF %s: then %u commands, else %u\n", SlotText(*c->condition()).c_str(), c->then_length(),
                      c->else_length());
          ends.push_back(index + c->then_length() + c->else_length());
          break;
        }
        case fb::CommandOp::AllocCommand: {
          const auto* a = cmd->op_as_AllocCommand();
          std::printf("ALLOC arena %u\n", a->arena());
          break;
        }
        case fb::CommandOp::FillCommand: {
          const auto* f = cmd->op_as_FillCommand();
          std::printf("FILL %s pattern 0x%llx/%u\n", SlotText(*f->target()).c_str(),
                      static_cast<unsigned long long>(f->pattern()), f->pattern_length());
          break;
        }
        case fb::CommandOp::CopyCommand: {
          const auto* c = cmd->op_as_CopyCommand();
          std::printf("COPY %s -> %s", SlotText(*c->source()).c_str(), SlotText(*c->target()).c_str());
          if (c->target_stride() != 0)
            std::printf(" + %llu per trip", static_cast<unsigned long long>(c->target_stride()));
          std::printf("\n");
          break;
        }
        case fb::CommandOp::DispatchCommand: {
          const auto* d = cmd->op_as_DispatchCommand();
          const auto* entry = exe.libraries()->Get(d->library())->entries()->Get(d->entry());
          std::printf("DISPATCH %s (library %u) wg(%u,%u,%u)\n", entry->name()->c_str(), d->library(),
                      d->workgroups()->Get(0), d->workgroups()->Get(1), d->workgroups()->Get(2));
          for (uint32_t b = 0; b < d->bindings()->size(); ++b) {
            bool out = b >= d->num_inputs();
            std::string alias;
            if (out && d->aliases() && d->aliases()->Get(b - d->num_inputs()) >= 0)
              alias = " (in place of input " + std::to_string(d->aliases()->Get(b - d->num_inputs())) + ")";
            std::printf("          %s %s%s\n", out ? "out" : "in ", SlotText(*d->bindings()->Get(b)).c_str(),
                        alias.c_str());
          }
          break;
        }
        default:
          std::printf("?\n");
      }
    }
  }
  return 0;
}

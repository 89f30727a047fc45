#include "serializer/writer.h"

#include <cstring>
#include <optional>

#include "base/alignment.h"
#include "serializer/file_format.h"

namespace hexir::serializer {
namespace {

struct SectionPlacement {
  SectionKind kind;
  const std::vector<uint8_t>* bytes;
  uint64_t alignment;
  uint64_t checksum;
  uint64_t offset = 0;
};

fb::Slot ToFb(const Slot& s) { return fb::Slot(s.offset, s.length, s.index, s.kind); }

flatbuffers::Offset<fb::Command> BuildCommand(flatbuffers::FlatBufferBuilder& b, const Command& c) {
  if (auto* a = std::get_if<AllocCommand>(&c)) {
    auto op = fb::CreateAllocCommand(b, a->arena);
    return fb::CreateCommand(b, fb::CommandOp::AllocCommand, op.Union());
  }
  if (auto* f = std::get_if<FillCommand>(&c)) {
    fb::Slot target = ToFb(f->target);
    auto op = fb::CreateFillCommand(b, &target, f->pattern, f->pattern_length);
    return fb::CreateCommand(b, fb::CommandOp::FillCommand, op.Union());
  }
  if (auto* d = std::get_if<DispatchCommand>(&c)) {
    std::vector<fb::Slot> bindings;
    for (const Slot& s : d->bindings) bindings.push_back(ToFb(s));
    auto wg = b.CreateVector(d->workgroups.data(), d->workgroups.size());
    auto bind = b.CreateVectorOfStructs(bindings);
    auto aliases = b.CreateVector(d->aliases);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> sources;
    if (!d->sources.empty()) sources = b.CreateVectorOfStrings(d->sources);
    auto op = fb::CreateDispatchCommand(b, d->library, d->entry, wg, bind, d->num_inputs, aliases, sources);
    return fb::CreateCommand(b, fb::CommandOp::DispatchCommand, op.Union());
  }
  if (auto* l = std::get_if<LoopCommand>(&c)) {
    std::optional<fb::Slot> count, condition, iteration;
    if (l->trip_count) count = ToFb(*l->trip_count);
    if (l->condition) condition = ToFb(*l->condition);
    if (l->iteration) iteration = ToFb(*l->iteration);
    auto op = fb::CreateLoopCommand(b, l->body_length, l->max_trips, count ? &*count : nullptr,
                                    condition ? &*condition : nullptr, iteration ? &*iteration : nullptr);
    return fb::CreateCommand(b, fb::CommandOp::LoopCommand, op.Union());
  }
  if (auto* i = std::get_if<IfCommand>(&c)) {
    fb::Slot condition = ToFb(i->condition);
    auto op = fb::CreateIfCommand(b, &condition, i->then_length, i->else_length);
    return fb::CreateCommand(b, fb::CommandOp::IfCommand, op.Union());
  }
  const auto& cp = std::get<CopyCommand>(c);
  fb::Slot src = ToFb(cp.source), dst = ToFb(cp.target);
  auto op = fb::CreateCopyCommand(b, &src, &dst, cp.target_stride);
  return fb::CreateCommand(b, fb::CommandOp::CopyCommand, op.Union());
}

std::vector<flatbuffers::Offset<fb::TensorSignature>> BuildSignatures(
    flatbuffers::FlatBufferBuilder& b, const std::vector<TensorSignature>& sigs) {
  std::vector<flatbuffers::Offset<fb::TensorSignature>> out;
  for (const TensorSignature& s : sigs)
    out.push_back(fb::CreateTensorSignature(b, b.CreateString(s.name), s.element_type,
                                            b.CreateVector(s.shape), s.donated, s.tied_input));
  return out;
}

// Builds the metadata flatbuffer. Section offsets are fixed-size fields, so the buffer's length
// does not depend on their values: the writer builds once to learn it, then with real offsets.
flatbuffers::DetachedBuffer BuildMetadata(const ExecutableSpec& spec,
                                          const std::vector<SectionPlacement>& sections,
                                          int32_t constants_section, int32_t narrow_section) {
  flatbuffers::FlatBufferBuilder b(1024);
  b.ForceDefaults(true);  // fixed layout regardless of values
  std::vector<fb::SectionRef> refs;
  for (const SectionPlacement& s : sections)
    refs.emplace_back(s.offset, s.bytes->size(), s.checksum, s.kind);
  std::vector<flatbuffers::Offset<fb::KernelLibrary>> libs;
  for (size_t i = 0; i < spec.libraries.size(); ++i) {
    std::vector<flatbuffers::Offset<fb::KernelEntry>> entries;
    for (const KernelEntry& e : spec.libraries[i].entries)
      entries.push_back(fb::CreateKernelEntry(b, b.CreateString(e.name), e.arity, e.workgroups, e.stack_bytes,
                                              b.CreateVector(e.binding_bytes),
                                              b.CreateVector(e.workgroup_size.data(), e.workgroup_size.size())));
    auto entries_vec = b.CreateVector(entries);
    auto features = b.CreateVectorOfStrings(spec.libraries[i].cpu_features);
    libs.push_back(fb::CreateKernelLibrary(b, static_cast<uint32_t>(i), spec.libraries[i].format, entries_vec, features,
                                           spec.libraries[i].compute_capability));
  }
  std::vector<flatbuffers::Offset<fb::Function>> funcs;
  for (const Function& f : spec.functions) {
    std::vector<flatbuffers::Offset<fb::Command>> cmds;
    for (const Command& c : f.commands) cmds.push_back(BuildCommand(b, c));
    auto name = b.CreateString(f.name);
    auto ins = b.CreateVector(BuildSignatures(b, f.inputs));
    auto outs = b.CreateVector(BuildSignatures(b, f.outputs));
    auto commands = b.CreateVector(cmds);
    std::vector<flatbuffers::Offset<fb::Arena>> arenas;
    for (const Arena& a : f.arenas) arenas.push_back(fb::CreateArena(b, a.memory_space, a.bytes, a.alignment));
    auto arenas_vec = b.CreateVector(arenas);
    auto plan = f.plan_json.empty() ? 0 : b.CreateString(f.plan_json);
    flatbuffers::Offset<flatbuffers::String> bucket_of = 0;
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::DimValue>>> bucket_dims = 0;
    if (!f.bucket_of.empty()) {
      bucket_of = b.CreateString(f.bucket_of);
      std::vector<flatbuffers::Offset<fb::DimValue>> dims;
      for (const auto& [dim, value] : f.bucket_dims) dims.push_back(fb::CreateDimValue(b, b.CreateString(dim), value));
      bucket_dims = b.CreateVector(dims);
    }
    flatbuffers::Offset<flatbuffers::String> rows_mixed_by = 0;
    if (!f.rows_mixed_by.empty()) rows_mixed_by = b.CreateString(f.rows_mixed_by);
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> pads_from = 0;
    if (!f.bucket_pads_from.empty()) pads_from = b.CreateVector(f.bucket_pads_from);
    funcs.push_back(fb::CreateFunction(b, name, ins, outs, arenas_vec, commands, plan, bucket_of, bucket_dims,
                                       rows_mixed_by, pads_from));
  }
  std::vector<fb::ConstantFill> fills;
  for (const ConstantFillSpec& f : spec.constant_fills)
    fills.emplace_back(f.offset, f.length, f.pattern, f.pattern_length);
  auto fills_vec = b.CreateVectorOfStructs(fills);
  std::vector<fb::ConstantWidening> widenings;
  for (const ConstantWideningSpec& w : spec.constant_widenings)
    widenings.emplace_back(w.source, w.target, w.count, w.format);
  auto widenings_vec = widenings.empty() ? 0 : b.CreateVectorOfStructs(widenings);
  auto producer = b.CreateString(spec.producer);
  auto target = b.CreateString(spec.target);
  std::vector<flatbuffers::Offset<fb::MemorySpace>> spaces;
  for (const MemorySpaceSpec& space : spec.memory_spaces)
    spaces.push_back(fb::CreateMemorySpace(b, b.CreateString(space.name), space.host_visible));
  auto spaces_vec = b.CreateVector(spaces);
  auto refs_vec = b.CreateVectorOfStructs(refs);
  auto libs_vec = b.CreateVector(libs);
  auto funcs_vec = b.CreateVector(funcs);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>> metadata_vec = 0;
  if (!spec.metadata.empty()) {
    std::vector<flatbuffers::Offset<fb::KeyValue>> entries;
    for (const auto& [key, value] : spec.metadata)
      entries.push_back(fb::CreateKeyValue(b, b.CreateString(key), b.CreateString(value)));
    metadata_vec = b.CreateVector(entries);
  }
  auto root = fb::CreateExecutable(b, kFormatVersion, producer, target, spaces_vec, spec.constants_memory_space,
                                   refs_vec, constants_section,
                                   spec.filled_constants_bytes, fills_vec, libs_vec, funcs_vec,
                                   narrow_section, widenings_vec, metadata_vec);
  fb::FinishExecutableBuffer(b, root);
  return b.Release();
}

void PutLE(uint8_t* dst, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::vector<uint8_t> WriteExecutable(const ExecutableSpec& spec) {
  // Sections: kernel libraries in order (library i is section i), the constant pool, then the
  // narrow constants.
  std::vector<SectionPlacement> sections;
  for (const KernelLibrary& lib : spec.libraries)
    sections.push_back({lib.format == KernelFormat::CudaPtx ? SectionKind::CudaPtx : SectionKind::HostCode, &lib.code, kSectionAlignment,
                        Checksum(lib.code.data(), lib.code.size())});
  int32_t constants_section = -1;
  if (!spec.constants.empty()) {
    constants_section = static_cast<int32_t>(sections.size());
    sections.push_back({SectionKind::Constants, &spec.constants, kConstantsAlignment,
                        Checksum(spec.constants.data(), spec.constants.size())});
  }
  int32_t narrow_section = -1;
  if (!spec.narrow_constants.empty()) {
    narrow_section = static_cast<int32_t>(sections.size());
    sections.push_back({SectionKind::NarrowConstants, &spec.narrow_constants, kSectionAlignment,
                        Checksum(spec.narrow_constants.data(), spec.narrow_constants.size())});
  }
  uint64_t metadata_length = BuildMetadata(spec, sections, constants_section, narrow_section).size();
  uint64_t cursor = kHeaderSize + metadata_length;
  for (SectionPlacement& s : sections) {
    s.offset = AlignUp(cursor, s.alignment);
    cursor = s.offset + s.bytes->size();
  }
  flatbuffers::DetachedBuffer metadata = BuildMetadata(spec, sections, constants_section, narrow_section);
  // Should the length ever change with the values, the file would be wrong: fail loudly.
  if (metadata.size() != metadata_length) std::abort();

  std::vector<uint8_t> file(cursor, 0);
  std::memcpy(file.data() + kHeaderSize, metadata.data(), metadata.size());
  for (const SectionPlacement& s : sections)
    if (!s.bytes->empty()) std::memcpy(file.data() + s.offset, s.bytes->data(), s.bytes->size());

  uint8_t* h = file.data();
  std::memcpy(h, kMagic, sizeof(kMagic));
  PutLE(h + offsetof(FileHeader, format_version), kFormatVersion, 4);
  PutLE(h + offsetof(FileHeader, header_size), kHeaderSize, 4);
  PutLE(h + offsetof(FileHeader, metadata_offset), kHeaderSize, 8);
  PutLE(h + offsetof(FileHeader, metadata_length), metadata_length, 8);
  PutLE(h + offsetof(FileHeader, metadata_checksum), Checksum(metadata.data(), metadata.size()), 8);
  PutLE(h + offsetof(FileHeader, file_length), file.size(), 8);
  PutLE(h + offsetof(FileHeader, header_checksum), Checksum(h, offsetof(FileHeader, header_checksum)), 8);
  return file;
}

}  // namespace hexir::serializer

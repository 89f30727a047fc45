#include "serializer/reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "base/alignment.h"
#include "serializer/executable_spec.h"
#include "serializer/file_format.h"

namespace hexir::serializer {
namespace {

// Largest tensor we accept: keeps byte-size arithmetic far from overflow.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 48;

uint64_t ReadLE(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// flatbuffers' verifier checks a vector's length field for 4-byte alignment only; vectors of
// 8-byte elements (and 8-byte structs in tables) must be 8-aligned to be read without UB.
bool Aligned8(const void* p) { return p == nullptr || IsPointerAligned(p, 8); }
// A vector of 8-byte elements: an empty one reads nothing (flatbuffers may place it 4-aligned).
template <typename Vector>
bool VectorAligned8(const Vector* v) { return v == nullptr || v->size() == 0 || Aligned8(v->data()); }

bool ValidElementType(fb::ElementType t) {
  return t >= fb::ElementType::MIN && t <= fb::ElementType::MAX;
}

StatusOr<uint64_t> CheckedTensorBytes(const fb::TensorSignature& sig, const char* what) {
  // (An empty shape, rank 0, reads no element: flatbuffers may place it 4-aligned.)
  if (sig.shape()->size() != 0 && !Aligned8(sig.shape()->data()))
    return DataLossError(what, " '", sig.name()->str(), "' has a misaligned shape");
  if (!ValidElementType(sig.element_type()))
    return DataLossError(what, " '", sig.name()->str(), "' has unknown element type ",
                         static_cast<int>(sig.element_type()));
  uint64_t bytes = ElementTypeSize(sig.element_type());
  for (int64_t d : *sig.shape()) {
    if (d < 0 || (d != 0 && bytes > kMaxTensorBytes / static_cast<uint64_t>(d)))
      return DataLossError(what, " '", sig.name()->str(), "' has an invalid dimension ", d);
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

class FunctionChecker {
 public:
  FunctionChecker(const fb::Executable& exe, const fb::Function& fn, uint64_t constant_bytes)
      : exe_(exe), fn_(fn), constant_bytes_(constant_bytes) {}
  // Shared with the module-level fill check.
  static Status CheckPattern(uint8_t n, uint64_t offset, uint64_t length, const char* what) {
    if (n != 1 && n != 2 && n != 4 && n != 8)
      return DataLossError(what, " pattern length ", int{n}, " is not 1, 2, 4 or 8");
    if (length % n != 0 || offset % n != 0)
      return DataLossError(what, " target is not a multiple of its pattern length ", int{n});
    return Status::Ok();
  }

  Status Check() {
    const std::string name = fn_.name()->str();
    for (uint32_t a = 0; a < fn_.arenas()->size(); ++a) {
      const fb::Arena* arena = fn_.arenas()->Get(a);
      if (!IsPowerOfTwo(arena->alignment()) || arena->alignment() > 4096)
        return DataLossError("function '", name, "': arena ", a, " alignment ", arena->alignment(),
                             " is not a power of two up to 4096");
      if (arena->memory_space() >= exe_.memory_spaces()->size())
        return DataLossError("function '", name, "': arena ", a, " is in memory space ", arena->memory_space(),
                             "; the executable has ", exe_.memory_spaces()->size());
    }
    arena_end_.assign(fn_.arenas()->size(), 0);
    alloc_at_.assign(fn_.arenas()->size(), -1);
    for (const auto* sig : *fn_.inputs()) {
      HEXIR_ASSIGN_OR_RETURN(uint64_t bytes, CheckedTensorBytes(*sig, "input"));
      input_bytes_.push_back(bytes);
    }
    std::vector<bool> tied(fn_.inputs()->size(), false);
    for (const auto* sig : *fn_.outputs()) {
      HEXIR_ASSIGN_OR_RETURN(uint64_t bytes, CheckedTensorBytes(*sig, "output"));
      output_bytes_.push_back(bytes);
      int32_t t = sig->tied_input();
      if (t == -1) continue;
      if (t < 0 || static_cast<size_t>(t) >= input_bytes_.size() || !fn_.inputs()->Get(t)->donated() ||
          input_bytes_[t] != bytes || tied[t])
        return DataLossError("function '", name, "': output '", sig->name()->str(), "' is tied to input ", t,
                             ", which is not a donated input of its size (or is tied twice)");
      tied[t] = true;
    }
    output_end_.assign(output_bytes_.size(), 0);
    uint32_t i = 0;
    for (const fb::Command* cmd : *fn_.commands()) {
      command_ = i;
      // Bodies that ended before this command close; an IF's then body, closing, opens its else.
      while (!open_.empty() && open_.back().end <= i) {
        Body closed = open_.back();
        open_.pop_back();
        if (closed.else_end > closed.end) open_.push_back({closed.else_end, false, 0, 0});
      }
      Status s = CheckCommand(*cmd);
      if (!s.ok()) return DataLossError("function '", name, "' command ", i, ": ", s.message());
      ++i;
    }
    // ALLOC says where each arena's life begins: every arena a slot is in has exactly one,
    // before its first use (CheckSlot), and one that nothing uses has none of its own bytes.
    for (uint32_t a = 0; a < fn_.arenas()->size(); ++a)
      if (alloc_at_[a] < 0 && fn_.arenas()->Get(a)->bytes() > 0)
        return DataLossError("function '", name, "': arena ", a, " of ", fn_.arenas()->Get(a)->bytes(),
                             " bytes has no ALLOC command");
    // An output is as large as what the commands write into it: a larger signature (4278190081x4
    // floats over a 16-byte plan) would make every caller allocate memory nothing fills.
    for (size_t o = 0; o < output_bytes_.size(); ++o)
      if (output_end_[o] < output_bytes_[o])
        return DataLossError("function '", name, "': output '", fn_.outputs()->Get(o)->name()->str(), "' declares ",
                             output_bytes_[o], " bytes, but its commands write only its first ", output_end_[o]);
    // An arena holds nothing but the slots placed in it: a larger size is corruption (and
    // would make a session allocate memory no command uses).
    for (uint32_t a = 0; a < fn_.arenas()->size(); ++a) {
      const fb::Arena* arena = fn_.arenas()->Get(a);
      uint64_t align = std::max<uint64_t>(64, arena->alignment());
      if (arena->bytes() > AlignUp(arena_end_[a], align))
        return DataLossError("function '", name, "': arena ", a, " of ", arena->bytes(),
                             " bytes, but its slots end at ", arena_end_[a]);
    }
    return Status::Ok();
  }

 private:
  Status CheckSlot(const fb::Slot& s, bool written) {
    uint64_t limit = 0;
    switch (s.kind()) {
      case fb::SlotKind::Arena:
        if (s.index() >= fn_.arenas()->size())
          return DataLossError("arena ", s.index(), " out of range (", fn_.arenas()->size(), " arenas)");
        limit = fn_.arenas()->Get(s.index())->bytes();
        if (alloc_at_[s.index()] < 0)
          return DataLossError("uses arena ", s.index(), " before its ALLOC command");
        break;
      case fb::SlotKind::Constant:
        if (written) return DataLossError("writes into the constant pool");
        limit = constant_bytes_;
        break;
      case fb::SlotKind::FilledConstant:
        if (written) return DataLossError("writes into the filled constants");
        limit = exe_.filled_constants_bytes();
        break;
      case fb::SlotKind::Input:
        if (written) return DataLossError("writes into input ", s.index());
        if (s.index() >= input_bytes_.size())
          return DataLossError("input index ", s.index(), " out of range (", input_bytes_.size(), " inputs)");
        limit = input_bytes_[s.index()];
        break;
      case fb::SlotKind::Output:
        if (s.index() >= output_bytes_.size())
          return DataLossError("output index ", s.index(), " out of range (", output_bytes_.size(), " outputs)");
        limit = output_bytes_[s.index()];
        if (written && RangeWithin(s.offset(), s.length(), limit))
          output_end_[s.index()] = std::max(output_end_[s.index()], s.offset() + s.length());
        break;
      default:
        return DataLossError("unknown slot kind ", static_cast<int>(s.kind()));
    }
    if (s.kind() != fb::SlotKind::Input && s.kind() != fb::SlotKind::Output && s.kind() != fb::SlotKind::Arena &&
        s.index() != 0)
      return DataLossError("slot index ", s.index(), " set for a slot kind without indices");
    if (!RangeWithin(s.offset(), s.length(), limit))
      return DataLossError("slot [", s.offset(), ", +", s.length(), ") exceeds its space of ", limit,
                           " bytes");
    if (s.kind() == fb::SlotKind::Arena)
      arena_end_[s.index()] = std::max(arena_end_[s.index()], s.offset() + s.length());
    return Status::Ok();
  }

  // A LOOP or IF body of `length` commands after this one must end inside the bodies around it.
  Status OpenBody(uint64_t length, uint64_t max_trips, bool loop, uint64_t else_length = 0) {
    uint64_t end = uint64_t{command_} + 1 + length + else_length;
    uint64_t limit = open_.empty() ? fn_.commands()->size() : open_.back().end;
    if (end > limit)
      return DataLossError(loop ? "LOOP" : "IF", " body of ", length + else_length, " commands ends at command ", end,
                           ", past the end of ", open_.empty() ? "the function" : "the body around it", " (", limit,
                           ")");
    if (open_.size() == kMaxBodyNesting)
      return DataLossError("LOOP and IF bodies nest more than ", kMaxBodyNesting, " deep");
    // An IF's then and else are bodies of their own, one after the other (the else opens when
    // the then closes): a loop in one may not reach into the other.
    open_.push_back({end - else_length, loop, max_trips, else_length ? end : 0});
    return Status::Ok();
  }
  // A scalar slot control flow reads or writes: 8-aligned (struct fields) and `bytes` long.
  Status CheckScalar(const fb::Slot* s, uint64_t bytes, bool written, const char* what) {
    if (s == nullptr) return Status::Ok();
    if (!Aligned8(s)) return DataLossError(what, " slot is misaligned");
    if (s->length() != bytes) return DataLossError(what, " slot holds ", s->length(), " bytes, not ", bytes);
    Status checked = CheckSlot(*s, written);
    if (!checked.ok()) return DataLossError(what, ": ", checked.message());
    return Status::Ok();
  }

  Status CheckCommand(const fb::Command& cmd) {
    switch (cmd.op_type()) {
      case fb::CommandOp::LoopCommand: {
        const auto* l = cmd.op_as_LoopCommand();
        if (l->max_trips() == 0 && l->trip_count() == nullptr && l->condition() == nullptr)
          return DataLossError("LOOP has no bound: no maximum, trip count or condition");
        HEXIR_RETURN_IF_ERROR(CheckScalar(l->trip_count(), 8, false, "LOOP trip count"));
        HEXIR_RETURN_IF_ERROR(CheckScalar(l->condition(), 1, false, "LOOP condition"));
        HEXIR_RETURN_IF_ERROR(CheckScalar(l->iteration(), 8, true, "LOOP iteration"));
        return OpenBody(l->body_length(), l->max_trips(), /*loop=*/true);
      }
      case fb::CommandOp::IfCommand: {
        const auto* c = cmd.op_as_IfCommand();
        HEXIR_RETURN_IF_ERROR(CheckScalar(c->condition(), 1, false, "IF condition"));
        return OpenBody(c->then_length(), 0, /*loop=*/false, c->else_length());
      }
      case fb::CommandOp::AllocCommand: {
        if (!open_.empty()) return DataLossError("ALLOC inside a LOOP or IF body");
        const auto* a = cmd.op_as_AllocCommand();
        if (a->arena() >= fn_.arenas()->size())
          return DataLossError("ALLOC of arena ", a->arena(), " out of range (", fn_.arenas()->size(), " arenas)");
        if (alloc_at_[a->arena()] >= 0)
          return DataLossError("ALLOC of arena ", a->arena(), " again (first at command ", alloc_at_[a->arena()], ")");
        alloc_at_[a->arena()] = command_;
        return Status::Ok();
      }
      case fb::CommandOp::FillCommand: {
        const auto* f = cmd.op_as_FillCommand();
        if (!Aligned8(f->target())) return DataLossError("FILL target is misaligned");
        HEXIR_RETURN_IF_ERROR(
            CheckPattern(f->pattern_length(), f->target()->offset(), f->target()->length(), "FILL"));
        return CheckSlot(*f->target(), /*written=*/true);
      }
      case fb::CommandOp::CopyCommand: {
        const auto* c = cmd.op_as_CopyCommand();
        if (!Aligned8(c->source()) || !Aligned8(c->target())) return DataLossError("COPY slots are misaligned");
        if (c->source()->length() != c->target()->length())
          return DataLossError("COPY of ", c->source()->length(), " bytes into ",
                               c->target()->length(), " bytes");
        HEXIR_RETURN_IF_ERROR(CheckSlot(*c->source(), false));
        HEXIR_RETURN_IF_ERROR(CheckSlot(*c->target(), true));
        if (c->target_stride() == 0) return Status::Ok();
        // A strided target: the innermost loop's last trip must stay inside the space too.
        const Body* loop = nullptr;
        for (auto it = open_.rbegin(); it != open_.rend() && loop == nullptr; ++it)
          if (it->loop) loop = &*it;
        if (loop == nullptr || loop->max_trips == 0)
          return DataLossError("COPY with a target stride outside a LOOP with a maximum trip count");
        uint64_t trips = loop->max_trips - 1;
        if (c->target_stride() > kMaxTensorBytes || trips > kMaxTensorBytes / c->target_stride())
          return DataLossError("COPY target stride ", c->target_stride(), " times ", trips, " trips overflows");
        if (c->target()->offset() > UINT64_MAX - c->target_stride() * trips)
          return DataLossError("COPY target offset overflows at the last trip");
        fb::Slot last(c->target()->offset() + c->target_stride() * trips, c->target()->length(),
                      c->target()->index(), c->target()->kind());
        Status checked = CheckSlot(last, true);
        if (!checked.ok()) return DataLossError("COPY target at the last trip: ", checked.message());
        return Status::Ok();
      }
      case fb::CommandOp::DispatchCommand: {
        const auto* d = cmd.op_as_DispatchCommand();
        if (!VectorAligned8(d->bindings())) return DataLossError("DISPATCH bindings are misaligned");
        if (d->library() >= exe_.libraries()->size())
          return DataLossError("DISPATCH library ", d->library(), " out of range");
        const auto* entries = exe_.libraries()->Get(d->library())->entries();
        if (d->entry() >= entries->size())
          return DataLossError("DISPATCH entry ", d->entry(), " out of range (", entries->size(), " entries)");
        const auto* entry = entries->Get(d->entry());
        if (d->bindings()->size() != entry->arity())
          return DataLossError("DISPATCH of '", entry->name()->str(), "' has ", d->bindings()->size(),
                               " bindings; the kernel takes ", entry->arity());
        if (d->num_inputs() > d->bindings()->size())
          return DataLossError("DISPATCH has more inputs than bindings");
        if (d->workgroups()->size() != 3)
          return DataLossError("DISPATCH workgroup count must have 3 dimensions");
        uint64_t total = 1;
        for (uint32_t w : *d->workgroups()) total *= w;
        if (total != entry->workgroups())
          return DataLossError("DISPATCH of '", entry->name()->str(), "' runs ", total,
                               " workgroups; the kernel has ", entry->workgroups());
        const auto* shape = entry->workgroup_size();
        if (shape == nullptr || shape->size() != 3 ||
            std::any_of(shape->begin(), shape->end(), [](uint32_t n) { return n < 1 || n > 1024; }))
          return DataLossError("kernel '", entry->name()->str(), "' has no workgroup shape of 3 sizes from 1 to 1024");
        const auto* sizes = entry->binding_bytes();
        if (sizes == nullptr || sizes->size() != entry->arity() || !VectorAligned8(sizes))
          return DataLossError("kernel '", entry->name()->str(), "' does not give the size of each of its ",
                               entry->arity(), " bindings");
        for (uint32_t k = 0; k < d->bindings()->size(); ++k)
          if (d->bindings()->Get(k)->length() != sizes->Get(k))
            return DataLossError("DISPATCH of '", entry->name()->str(), "' binds ", d->bindings()->Get(k)->length(),
                                 " bytes to binding ", k, "; the kernel accesses ", sizes->Get(k));
        uint32_t num_outputs = d->bindings()->size() - d->num_inputs();
        if (d->aliases() != nullptr) {
          if (d->aliases()->size() != num_outputs)
            return DataLossError("DISPATCH has ", d->aliases()->size(), " alias entries for ",
                                 num_outputs, " outputs");
          for (int32_t a : *d->aliases())
            if (a < -1 || a >= static_cast<int32_t>(d->num_inputs()))
              return DataLossError("DISPATCH alias ", a, " is not an input index");
        }
        for (uint32_t b = 0; b < d->bindings()->size(); ++b)
          HEXIR_RETURN_IF_ERROR(CheckSlot(*d->bindings()->Get(b), b >= d->num_inputs()));
        // CUDA kernels access their bindings 128 bits at a time from the start: each must start
        // 16-byte aligned inside its buffer (device buffers and caller-bound device memory are).
        if (exe_.libraries()->Get(d->library())->format() == fb::KernelFormat::CudaPtx)
          for (uint32_t b = 0; b < d->bindings()->size(); ++b)
            if (d->bindings()->Get(b)->offset() % kCudaBindingAlignment != 0)
              return DataLossError("DISPATCH of '", entry->name()->str(), "' binds binding ", b, " at byte offset ",
                                   d->bindings()->Get(b)->offset(), ", not a multiple of the ", kCudaBindingAlignment,
                                   " bytes CUDA kernels assume");
        return Status::Ok();
      }
      default:
        return DataLossError("unknown command type ", static_cast<int>(cmd.op_type()));
    }
  }

  const fb::Executable& exe_;
  const fb::Function& fn_;
  uint64_t constant_bytes_;
  std::vector<uint64_t> input_bytes_, output_bytes_;
  std::vector<uint64_t> output_end_;  // per output: the end of what the commands write
  std::vector<uint64_t> arena_end_;  // per arena: where its last slot ends
  std::vector<int64_t> alloc_at_;    // per arena: the command that ALLOCs it, or -1
  uint32_t command_ = 0;             // the command being checked
  // The LOOP and IF bodies around the command being checked, innermost last.
  struct Body {
    uint64_t end;        // the first command after it
    bool loop;
    uint64_t max_trips;  // a LOOP's static bound (0: none)
    uint64_t else_end;   // an IF's then body: where its else body ends (0: no else body)
  };
  std::vector<Body> open_;
};

}  // namespace

uint64_t ExecutableView::TensorBytes(const fb::TensorSignature& sig) {
  uint64_t bytes = ElementTypeSize(sig.element_type());
  for (int64_t d : *sig.shape()) bytes *= static_cast<uint64_t>(d);
  return bytes;
}

namespace {

// Shape buckets: the functions of one group (bucket_of) name the same dimensions in the same
// order, each a positive value, no two the same; they take and return the same tensors (names
// and ranks); a group's name is not also a function's.
Status CheckBuckets(const fb::Executable& root) {
  std::map<std::string, std::vector<const fb::Function*>> groups;
  std::set<std::string> names;
  for (const fb::Function* fn : *root.functions()) {
    names.insert(fn->name()->str());
    if (fn->bucket_of() == nullptr) continue;
    if (fn->bucket_of()->size() == 0 || fn->bucket_dims() == nullptr || fn->bucket_dims()->size() == 0)
      return DataLossError("function '", fn->name()->str(), "' is a shape bucket without a group or dimensions");
    for (const fb::DimValue* d : *fn->bucket_dims())
      if (d->value() < 1)
        return DataLossError("function '", fn->name()->str(), "' fixes dimension '", d->name()->str(), "' to ",
                             d->value());
    groups[fn->bucket_of()->str()].push_back(fn);
  }
  for (const auto& [group, members] : groups) {
    if (names.count(group))
      return DataLossError("shape bucket group '", group, "' is also the name of a function");
    const fb::Function* first = members.front();
    auto same_tensors = [](const auto* a, const auto* b) {
      if (a->size() != b->size()) return false;
      for (uint32_t i = 0; i < a->size(); ++i)
        if (a->Get(i)->name()->str() != b->Get(i)->name()->str() ||
            a->Get(i)->shape()->size() != b->Get(i)->shape()->size())
          return false;
      return true;
    };
    std::set<std::vector<int64_t>> seen;
    for (const fb::Function* fn : members) {
      const auto* dims = fn->bucket_dims();
      bool same_dims = dims->size() == first->bucket_dims()->size();
      std::vector<int64_t> values;
      for (uint32_t d = 0; same_dims && d < dims->size(); ++d) {
        same_dims = dims->Get(d)->name()->str() == first->bucket_dims()->Get(d)->name()->str();
        values.push_back(dims->Get(d)->value());
      }
      if (!same_dims || !same_tensors(fn->inputs(), first->inputs()) || !same_tensors(fn->outputs(), first->outputs()))
        return DataLossError("shape buckets '", first->name()->str(), "' and '", fn->name()->str(), "' of '", group,
                             "' differ in their dimensions or tensors");
      if (!seen.insert(values).second)
        return DataLossError("two shape buckets of '", group, "' fix the same dimensions ('", fn->name()->str(), "')");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ExecutableView> ExecutableView::Open(ByteSpan file, const ReadOptions& options) {
  if (file.size() < kHeaderSize)
    return DataLossError("file is ", file.size(), " bytes, shorter than the ", kHeaderSize,
                         "-byte header: not a Hexir executable or truncated");
  if (!IsPointerAligned(file.data(), 8))
    return InvalidArgumentError("executable bytes must be 8-byte aligned in memory");
  const unsigned char* h = file.data();
  if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0)
    return DataLossError("bad magic: not a Hexir executable (.hxb)");
  uint32_t version = static_cast<uint32_t>(ReadLE(h + offsetof(FileHeader, format_version), 4));
  if (version != kFormatVersion)
    return UnimplementedError("format version ", version, " is not supported (this runtime reads version ",
                              kFormatVersion, "); recompile the model");
  uint64_t header_sum = ReadLE(h + offsetof(FileHeader, header_checksum), 8);
  if (header_sum != Checksum(h, offsetof(FileHeader, header_checksum)))
    return DataLossError("header checksum mismatch: the file is corrupt");
  for (size_t i = offsetof(FileHeader, reserved); i < kHeaderSize; ++i)
    if (h[i] != 0) return DataLossError("reserved header byte ", i, " is not zero: the file is corrupt");
  uint64_t file_length = ReadLE(h + offsetof(FileHeader, file_length), 8);
  if (file_length != file.size())
    return DataLossError("file is ", file.size(), " bytes but its header says ", file_length,
                         ": truncated or padded");
  uint64_t meta_off = ReadLE(h + offsetof(FileHeader, metadata_offset), 8);
  uint64_t meta_len = ReadLE(h + offsetof(FileHeader, metadata_length), 8);
  if (meta_off < kHeaderSize || !IsAligned(meta_off, 8) || !RangeWithin(meta_off, meta_len, file.size()))
    return DataLossError("metadata range [", meta_off, ", +", meta_len, ") is invalid for a ",
                         file.size(), "-byte file");
  const unsigned char* meta = h + meta_off;
  if (ReadLE(h + offsetof(FileHeader, metadata_checksum), 8) != Checksum(meta, meta_len))
    return DataLossError("metadata checksum mismatch: the file is corrupt");
  flatbuffers::Verifier verifier(meta, meta_len);
  if (!fb::VerifyExecutableBuffer(verifier))
    return DataLossError("metadata failed flatbuffer verification");
  const fb::Executable* root = fb::GetExecutable(meta);
  if (root->format_version() != kFormatVersion)
    return DataLossError("metadata format version ", root->format_version(), " disagrees with header ",
                         kFormatVersion);

  ExecutableView view(file, root);
  const auto* sections = root->sections();
  if (!VectorAligned8(sections) || !VectorAligned8(root->constant_fills()))
    return DataLossError("metadata vectors are misaligned: the file is corrupt");
  for (uint32_t i = 0; i < sections->size(); ++i) {
    const fb::SectionRef* s = sections->Get(i);
    bool is_constants = s->kind() == fb::SectionKind::Constants;
    uint64_t align = is_constants ? kConstantsAlignment : kSectionAlignment;
    if (s->offset() < meta_off + meta_len || !IsAligned(s->offset(), align) ||
        !RangeWithin(s->offset(), s->length(), file.size()))
      return DataLossError("section ", i, " [", s->offset(), ", +", s->length(),
                           ") is out of range or misaligned in a ", file.size(), "-byte file");
    if (!is_constants || options.verify_constants) {
      if (Checksum(h + s->offset(), s->length()) != s->checksum())
        return DataLossError("section ", i, " (", fb::EnumNameSectionKind(s->kind()),
                             ") checksum mismatch: the file is corrupt");
    }
  }
  int32_t cs = root->constants_section();
  if (cs != -1 && (cs < 0 || static_cast<uint32_t>(cs) >= sections->size() ||
                   sections->Get(cs)->kind() != fb::SectionKind::Constants))
    return DataLossError("constants section index ", cs, " is invalid");
  if (root->memory_spaces()->size() == 0)
    return DataLossError("the executable names no memory space");
  for (uint32_t i = 0; i < root->memory_spaces()->size(); ++i)
    if (root->memory_spaces()->Get(i)->name()->size() == 0)
      return DataLossError("memory space ", i, " has no name");
  if (root->constants_memory_space() >= root->memory_spaces()->size())
    return DataLossError("the constants are in memory space ", root->constants_memory_space(), "; there are ",
                         root->memory_spaces()->size());
  for (uint32_t i = 0; i < root->libraries()->size(); ++i) {
    const fb::KernelLibrary* lib = root->libraries()->Get(i);
    fb::SectionKind code = lib->format() == fb::KernelFormat::HostElf   ? fb::SectionKind::HostCode
                           : lib->format() == fb::KernelFormat::CudaPtx ? fb::SectionKind::CudaPtx
                                                                        : fb::SectionKind::Constants;
    if (code == fb::SectionKind::Constants)
      return DataLossError("kernel library ", i, " has unknown format ", static_cast<int>(lib->format()));
    if (lib->section() >= sections->size() || sections->Get(lib->section())->kind() != code)
      return DataLossError("kernel library ", i, " (", fb::EnumNameKernelFormat(lib->format()), ") names section ",
                           lib->section(), ", which does not hold code of its format");
  }
  uint64_t fills_end = 0;
  if (root->constant_fills() != nullptr) {
    for (uint32_t i = 0; i < root->constant_fills()->size(); ++i) {
      const fb::ConstantFill* f = root->constant_fills()->Get(i);
      HEXIR_RETURN_IF_ERROR(FunctionChecker::CheckPattern(f->pattern_length(), f->offset(), f->length(),
                                                          "constant fill"));
      if (!RangeWithin(f->offset(), f->length(), root->filled_constants_bytes()))
        return DataLossError("constant fill ", i, " [", f->offset(), ", +", f->length(),
                             ") exceeds the filled constants of ", root->filled_constants_bytes(), " bytes");
      fills_end = std::max(fills_end, f->offset() + f->length());
    }
  }
  int32_t ns = root->narrow_constants_section();
  if (ns != -1 && (ns < 0 || static_cast<uint32_t>(ns) >= sections->size() ||
                   sections->Get(ns)->kind() != fb::SectionKind::NarrowConstants))
    return DataLossError("narrow constants section index ", ns, " is invalid");
  if (root->constant_widenings() != nullptr) {
    if (!VectorAligned8(root->constant_widenings()))
      return DataLossError("metadata vectors are misaligned: the file is corrupt");
    uint64_t narrow_bytes = ns < 0 ? 0 : sections->Get(ns)->length();
    for (uint32_t i = 0; i < root->constant_widenings()->size(); ++i) {
      const fb::ConstantWidening* w = root->constant_widenings()->Get(i);
      // count <= 2^60 keeps count * 4 from overflowing; the ranges are then checked.
      if (w->format() > 1 || w->count() > (uint64_t{1} << 60) || w->source() % 2 != 0 || w->target() % 4 != 0 ||
          !RangeWithin(w->source(), w->count() * 2, narrow_bytes) ||
          !RangeWithin(w->target(), w->count() * 4, root->filled_constants_bytes()))
        return DataLossError("constant widening ", i, " (format ", static_cast<int>(w->format()), ", ", w->count(),
                             " values from [", w->source(), "] to [", w->target(),
                             "]) is misaligned or exceeds the narrow constants of ", narrow_bytes,
                             " bytes or the filled constants of ", root->filled_constants_bytes(), " bytes");
      fills_end = std::max(fills_end, w->target() + w->count() * 4);
    }
  }
  // The FilledConstant space holds nothing but the fills and the widened constants.
  if (root->filled_constants_bytes() > AlignUp(fills_end, kSectionAlignment))
    return DataLossError("filled constants of ", root->filled_constants_bytes(), " bytes, but the fills end at ",
                         fills_end);
  uint64_t constant_bytes = view.constants().size();
  for (const fb::Function* fn : *root->functions())
    HEXIR_RETURN_IF_ERROR(FunctionChecker(*root, *fn, constant_bytes).Check());
  HEXIR_RETURN_IF_ERROR(CheckBuckets(*root));
  return view;
}

ByteSpan ExecutableView::section(uint32_t index) const {
  const fb::SectionRef* s = root_->sections()->Get(index);
  return file_.subspan(s->offset(), s->length());
}

ByteSpan ExecutableView::constants() const {
  int32_t cs = root_->constants_section();
  return cs < 0 ? ByteSpan() : section(static_cast<uint32_t>(cs));
}

ByteSpan ExecutableView::narrow_constants() const {
  int32_t ns = root_->narrow_constants_section();
  return ns < 0 ? ByteSpan() : section(static_cast<uint32_t>(ns));
}

const fb::Function* ExecutableView::FindFunction(const std::string& name) const {
  for (const fb::Function* fn : *root_->functions())
    if (fn->name()->str() == name) return fn;
  return nullptr;
}

}  // namespace hexir::serializer

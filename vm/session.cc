#include "vm/session.h"

#include <algorithm>
#include <cstring>

#include "base/alignment.h"
#include "vm/interpreter.h"

namespace hexir::vm {

StatusOr<std::unique_ptr<Session>> Session::Create(const Module& module, const std::string& function) {
  HEXIR_ASSIGN_OR_RETURN(const FunctionInfo* info, module.FindFunction(function));
  std::unique_ptr<Session> session(new Session(module, info));
  const serializer::fb::Function& fn = *info->function;
  // Every arena is in a memory space the module checked the device has.
  for (const serializer::fb::Arena* arena : *fn.arenas()) {
    hal::DevicePtr base = nullptr;
    if (arena->bytes() > 0) {
      HEXIR_ASSIGN_OR_RETURN(base, module.device().Allocate(arena->bytes(), arena->alignment()));
    }
    session->arenas_.push_back(base);
  }
  for (const TensorInfo& in : info->inputs) {
    hal::DevicePtr staging = nullptr;
    if (ElementTypeSize(in.element_type) > 1 && in.byte_size > 0) {
      HEXIR_ASSIGN_OR_RETURN(staging, module.device().Allocate(in.byte_size, 64));
    }
    session->staging_.push_back(staging);
  }
  session->input_bases_.resize(info->inputs.size());
  session->output_bases_.resize(info->outputs.size());
  session->bindings_.resize(MaxDispatchArity(fn));
  return session;
}

Session::~Session() {
  for (size_t i = 0; i < staging_.size(); ++i) module_.device().Free(staging_[i], info_->inputs[i].byte_size);
  for (size_t i = 0; i < arenas_.size(); ++i)
    module_.device().Free(arenas_[i], info_->function->arenas()->Get(i)->bytes());
}

uint64_t Session::arena_bytes() const {
  uint64_t bytes = 0;
  for (const serializer::fb::Arena* arena : *info_->function->arenas()) bytes += arena->bytes();
  return bytes;
}

namespace {

template <typename View>
Status CheckOne(const TensorInfo& sig, const View& view, const char* kind, size_t index) {
  bool same_shape = view.shape.size() == sig.shape.size() &&
                    std::equal(view.shape.begin(), view.shape.end(), sig.shape.begin());
  if (view.element_type != sig.element_type || !same_shape)
    return InvalidArgumentError(kind, " ", index, " '", sig.name, "' expects ",
                                DescribeTensor(sig.element_type, Span<const int64_t>(sig.shape)), ", got ",
                                DescribeTensor(view.element_type, view.shape));
  if (view.data == nullptr && sig.byte_size != 0)
    return InvalidArgumentError(kind, " ", index, " '", sig.name, "' has no data");
  return Status::Ok();
}

bool Overlap(const void* a, uint64_t a_len, const void* b, uint64_t b_len) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_len > 0 && b_len > 0 && x < y + b_len && y < x + a_len;
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
    HEXIR_RETURN_IF_ERROR(CheckOne(info_->inputs[i], inputs[i], "input", i));
  for (size_t i = 0; i < outputs.size(); ++i) {
    HEXIR_RETURN_IF_ERROR(CheckOne(info_->outputs[i], outputs[i], "output", i));
    // Kernels write outputs while they may still read inputs: they must not share memory,
    // except an output bound exactly onto the donated input it is tied to (in place).
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (!Overlap(outputs[i].data, info_->outputs[i].byte_size, inputs[j].data, info_->inputs[j].byte_size))
        continue;
      if (info_->outputs[i].tied_input == static_cast<int>(j) && outputs[i].data == inputs[j].data) continue;
      return InvalidArgumentError("output ", i, " '", info_->outputs[i].name, "' overlaps input ", j, " '",
                                  info_->inputs[j].name, "'; give outputs their own buffers",
                                  info_->outputs[i].tied_input == static_cast<int>(j)
                                      ? " or bind it exactly onto that input" : "");
    }
    for (size_t j = 0; j < i; ++j)
      if (Overlap(outputs[i].data, info_->outputs[i].byte_size, outputs[j].data, info_->outputs[j].byte_size))
        return InvalidArgumentError("outputs ", j, " and ", i, " overlap");
  }
  return Status::Ok();
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  HEXIR_RETURN_IF_ERROR(CheckBindings(inputs, outputs));
  // Kernels never write inputs (the reader refuses any command that would), so a caller's
  // buffer is bound in place when it is aligned to its element size; otherwise it is copied
  // into staging made at Create() (kernels may rely on natural alignment).
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint64_t align = ElementTypeSize(info_->inputs[i].element_type);
    if (align <= 1 || IsPointerAligned(inputs[i].data, align)) {
      input_bases_[i] = const_cast<void*>(inputs[i].data);
    } else {
      HEXIR_RETURN_IF_ERROR(module_.device().Copy(staging_[i], inputs[i].data, info_->inputs[i].byte_size));
      input_bases_[i] = staging_[i];
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) output_bases_[i] = outputs[i].data;
  SpaceBases bases;
  bases.arenas = arenas_.data();
  bases.constants = module_.constants();
  bases.filled_constants = module_.filled_constants();
  bases.inputs = input_bases_.data();
  bases.outputs = output_bases_.data();
  return Execute(module_, *info_->function, bases, bindings_);
}

}  // namespace hexir::vm

#include "vm/session.h"

#include <algorithm>
#include <sstream>

#include "serializer/executable_spec.h"
#include "vm/interpreter.h"

namespace hexir {
namespace fb = serializer::fb;

std::string DescribeTensor(ElementType type, Span<const int64_t> shape) {
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  if (shape.empty()) os << "scalar";
  os << " " << serializer::ElementTypeName(type);
  return os.str();
}

StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Module> module,
                                                   const std::string& function) {
  const fb::Function* fn = module->view().FindFunction(function);
  if (fn == nullptr) {
    std::string names;
    for (const fb::Function* f : *module->view().executable().functions())
      names += (names.empty() ? "" : ", ") + f->name()->str();
    return NotFoundError("no function '", function, "' in the module (it has: ", names, ")");
  }
  std::unique_ptr<Session> session(new Session(module, fn));
  if (fn->arena_bytes() > 0) {
    HEXIR_ASSIGN_OR_RETURN(session->arena_,
                           module->device().Allocate(fn->arena_bytes(), fn->arena_alignment()));
  }
  session->input_bases_.resize(fn->inputs()->size());
  session->output_bases_.resize(fn->outputs()->size());
  session->bindings_.resize(vm::MaxDispatchArity(*fn));
  return session;
}

Session::~Session() {
  if (arena_ != nullptr) module_->device().Free(arena_);
}

namespace {

template <typename View>
Status CheckOne(const fb::TensorSignature& sig, const View& view, const char* kind, size_t index) {
  bool same_shape = view.shape.size() == sig.shape()->size() &&
                    std::equal(view.shape.begin(), view.shape.end(), sig.shape()->begin());
  if (view.element_type != sig.element_type() || !same_shape) {
    Span<const int64_t> expected(sig.shape()->data(), sig.shape()->size());
    return InvalidArgumentError(kind, " ", index, " '", sig.name()->str(), "' expects ",
                                DescribeTensor(sig.element_type(), expected), ", got ",
                                DescribeTensor(view.element_type, view.shape));
  }
  if (view.data == nullptr && serializer::ExecutableView::TensorBytes(sig) != 0)
    return InvalidArgumentError(kind, " ", index, " '", sig.name()->str(), "' has no data");
  return Status::Ok();
}

}  // namespace

Status Session::CheckBindings(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) const {
  if (inputs.size() != function_->inputs()->size())
    return InvalidArgumentError("function '", function_->name()->str(), "' takes ",
                                function_->inputs()->size(), " inputs, got ", inputs.size());
  if (outputs.size() != function_->outputs()->size())
    return InvalidArgumentError("function '", function_->name()->str(), "' returns ",
                                function_->outputs()->size(), " outputs, got ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    HEXIR_RETURN_IF_ERROR(CheckOne(*function_->inputs()->Get(i), inputs[i], "input", i));
  for (size_t i = 0; i < outputs.size(); ++i)
    HEXIR_RETURN_IF_ERROR(CheckOne(*function_->outputs()->Get(i), outputs[i], "output", i));
  return Status::Ok();
}

Status Session::Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) {
  HEXIR_RETURN_IF_ERROR(CheckBindings(inputs, outputs));
  // Kernels never write inputs (the reader refuses any command that would), so binding the
  // caller's const memory directly is safe.
  for (size_t i = 0; i < inputs.size(); ++i) input_bases_[i] = const_cast<void*>(inputs[i].data);
  for (size_t i = 0; i < outputs.size(); ++i) output_bases_[i] = outputs[i].data;
  vm::SpaceBases bases;
  bases.arena = arena_;
  bases.constants = module_->constants();
  bases.filled_constants = module_->filled_constants();
  bases.inputs = input_bases_.data();
  bases.outputs = output_bases_.data();
  return vm::Execute(*module_, *function_, bases, bindings_);
}

}  // namespace hexir

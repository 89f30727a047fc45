// libFuzzer target: the executable reader (what Module::Load verifies before anything runs).
// Any input must be refused with a Status or accepted; accepted images are walked the way the
// interpreter and hexir-dump walk them, so an image that verifies but is inconsistent shows up
// as a sanitizer report.
#include <cstdint>
#include <cstring>
#include <vector>

#include "serializer/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size) std::memcpy(aligned.data(), data, size);
  hexir::ByteSpan bytes(reinterpret_cast<const unsigned char*>(aligned.data()), size);
  for (bool verify_constants : {false, true}) {
    auto view = hexir::serializer::ExecutableView::Open(bytes, {verify_constants});
    if (!view.ok()) continue;
    const auto& exe = view->executable();
    uint64_t sum = view->constants().size();
    for (uint32_t i = 0; i < exe.sections()->size(); ++i) sum += view->section(i).size();
    for (const auto* fn : *exe.functions()) {
      for (const auto* sig : *fn->inputs()) sum += hexir::serializer::ExecutableView::TensorBytes(*sig);
      for (const auto* cmd : *fn->commands()) {
        if (const auto* d = cmd->op_as_DispatchCommand()) {
          const auto* entry = exe.libraries()->Get(d->library())->entries()->Get(d->entry());
          sum += entry->arity() + d->bindings()->size();
        }
        if (const auto* l = cmd->op_as_LoopCommand()) {
          sum += l->body_length() + l->max_trips();
          for (const auto* slot : {l->trip_count(), l->condition(), l->iteration()})
            if (slot) sum += slot->offset() + slot->length();
        }
        if (const auto* c = cmd->op_as_IfCommand()) sum += c->condition()->offset() + c->then_length() + c->else_length();
        if (const auto* c = cmd->op_as_CopyCommand()) sum += c->target_stride() + c->target()->length();
      }
    }
    if (sum == 0xdeadbeef) std::abort();  // keeps the walk from being optimized away
  }
  return 0;
}

#include "vm/interpreter.h"

#include <algorithm>
#include <chrono>

namespace hexir::vm {
namespace fb = serializer::fb;

namespace {

inline hal::DevicePtr Resolve(const fb::Slot& slot, const SpaceBases& bases) {
  unsigned char* base = nullptr;
  switch (slot.kind()) {
    case fb::SlotKind::Arena: base = static_cast<unsigned char*>(bases.arenas[slot.index()]); break;
    case fb::SlotKind::Constant: base = static_cast<unsigned char*>(bases.constants); break;
    case fb::SlotKind::Input: base = static_cast<unsigned char*>(bases.inputs[slot.index()]); break;
    case fb::SlotKind::Output: base = static_cast<unsigned char*>(bases.outputs[slot.index()]); break;
    case fb::SlotKind::FilledConstant: base = static_cast<unsigned char*>(bases.filled_constants); break;
  }
  return base + slot.offset();
}

}  // namespace

size_t MaxDispatchArity(const fb::Function& function) {
  size_t arity = 0;
  for (const fb::Command* cmd : *function.commands())
    if (const auto* d = cmd->op_as_DispatchCommand()) arity = std::max<size_t>(arity, d->bindings()->size());
  return arity;
}

Status Execute(const Module& module, const fb::Function& function, const SpaceBases& bases,
               std::vector<hal::DevicePtr>& bindings, hal::CommandQueue& queue, double* command_ms, bool poison,
               bool* device_clock) {
  using TimingClock = hal::CommandQueue::TimingClock;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  // Work issued before (a GPU's input copies) is not the first command's.
  if (command_ms) HEXIR_RETURN_IF_ERROR(queue.Synchronize());
  for (const fb::Command* cmd : *function.commands()) {
    if (command_ms) {
      start = Clock::now();
      HEXIR_RETURN_IF_ERROR(queue.BeginTiming(TimingClock::kCommand));
    }
    switch (cmd->op_type()) {
      case fb::CommandOp::AllocCommand: {
        // The Session allocated its arenas when it was created; here their contents begin.
        if (!poison) break;
        const auto* a = cmd->op_as_AllocCommand();
        uint64_t bytes = function.arenas()->Get(a->arena())->bytes();
        if (bytes == 0) break;
        // A signalling NaN in every f32; a byte pattern where the arena is no multiple of 4.
        if (bytes % 4 == 0)
          HEXIR_RETURN_IF_ERROR(queue.Fill(bases.arenas[a->arena()], bytes, 0x7fa00000u, 4));
        else
          HEXIR_RETURN_IF_ERROR(queue.Fill(bases.arenas[a->arena()], bytes, 0xa5, 1));
        break;
      }
      case fb::CommandOp::FillCommand: {
        const auto* f = cmd->op_as_FillCommand();
        HEXIR_RETURN_IF_ERROR(queue.Fill(Resolve(*f->target(), bases), f->target()->length(),
                                          f->pattern(), f->pattern_length()));
        break;
      }
      case fb::CommandOp::CopyCommand: {
        const auto* c = cmd->op_as_CopyCommand();
        // Both slots are device memory (arena, constants, bound inputs and outputs).
        HEXIR_RETURN_IF_ERROR(queue.Copy(hal::CopyDirection::kDeviceToDevice, Resolve(*c->target(), bases),
                                         Resolve(*c->source(), bases), c->target()->length()));
        break;
      }
      case fb::CommandOp::DispatchCommand: {
        const auto* d = cmd->op_as_DispatchCommand();
        uint32_t n = d->bindings()->size();
        for (uint32_t i = 0; i < n; ++i) bindings[i] = Resolve(*d->bindings()->Get(i), bases);
        const auto* wg = d->workgroups();
        HEXIR_RETURN_IF_ERROR(queue.Dispatch(module.library(d->library()), d->entry(),
                                              {wg->Get(0), wg->Get(1), wg->Get(2)},
                                              Span<const hal::DevicePtr>(bindings.data(), n)));
        break;
      }
      default:
        return InternalError("unverified command type reached the interpreter");
    }
    if (command_ms) {
      HEXIR_RETURN_IF_ERROR(queue.EndTiming(TimingClock::kCommand));
      HEXIR_RETURN_IF_ERROR(queue.Synchronize());
      double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      HEXIR_ASSIGN_OR_RETURN(std::optional<double> device_ms, queue.TimedMilliseconds(TimingClock::kCommand));
      *command_ms++ += device_ms ? *device_ms : wall_ms;
      if (device_clock) *device_clock = device_ms.has_value();
    }
  }
  return Status::Ok();
}

}  // namespace hexir::vm

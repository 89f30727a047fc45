#include "vm/interpreter.h"

#include "serializer/file_format.h"

#include <algorithm>
#include <array>
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

namespace {

// One run's state while the commands replay: what Execute was given, and the trip of each
// loop around the command being issued.
class Replay {
 public:
  Replay(const Module& module, const fb::Function& function, const SpaceBases& bases,
         std::vector<hal::DevicePtr>& bindings, hal::CommandQueue& queue, double* command_ms, bool poison,
         bool* device_clock, const RunOptions* control)
      : module_(module), function_(function), commands_(*function.commands()), bases_(bases), bindings_(bindings),
        queue_(queue), command_ms_(command_ms), poison_(poison), device_clock_(device_clock), control_(control) {}

  // Issues commands [begin, end); the reader checked that every body nests inside it.
  Status Range(uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end;) {
      if (control_) HEXIR_RETURN_IF_ERROR(CheckRunControl(control_, issued_));
      ++issued_;
      const fb::Command* cmd = commands_.Get(i);
      switch (cmd->op_type()) {
        case fb::CommandOp::LoopCommand: {
          const auto* l = cmd->op_as_LoopCommand();
          HEXIR_RETURN_IF_ERROR(Loop(*l, i + 1));
          i += 1 + l->body_length();
          continue;
        }
        case fb::CommandOp::IfCommand: {
          const auto* c = cmd->op_as_IfCommand();
          HEXIR_ASSIGN_OR_RETURN(uint64_t condition, ReadScalar(*c->condition()));
          uint32_t then_begin = i + 1, else_begin = then_begin + c->then_length();
          if (condition != 0)
            HEXIR_RETURN_IF_ERROR(Range(then_begin, else_begin));
          else
            HEXIR_RETURN_IF_ERROR(Range(else_begin, else_begin + c->else_length()));
          i = else_begin + c->else_length();
          continue;
        }
        default:
          HEXIR_RETURN_IF_ERROR(Timed(i, *cmd));
          ++i;
      }
    }
    return Status::Ok();
  }

 private:
  Status Loop(const fb::LoopCommand& l, uint32_t body) {
    uint64_t trips = l.max_trips() == 0 ? UINT64_MAX : l.max_trips();
    if (l.trip_count() != nullptr) {
      HEXIR_ASSIGN_OR_RETURN(uint64_t count, ReadScalar(*l.trip_count()));
      // A negative count runs no trip, as ONNX's Loop.
      trips = std::min<uint64_t>(trips, static_cast<int64_t>(count) < 0 ? 0 : count);
    }
    // A cap on trips (RunOptions::max_loop_trips): a count over it is refused before any work.
    uint64_t cap = control_ != nullptr ? control_->max_loop_trips : 0;
    if (cap != 0 && l.trip_count() != nullptr && trips > cap)
      return InvalidArgumentError("a Loop asks for ", trips, " trips, over the cap of ", cap, " (max_loop_trips)");
    // The reader bounds the nesting, so a loop always has its entry.
    if (depth_ == trips_.size()) return InternalError("loops nest deeper than the reader allows");
    size_t level = depth_++;
    Status status = Status::Ok();
    for (uint64_t trip = 0; trip < trips && status.ok(); ++trip) {
      trips_[level] = trip;
      if (cap != 0 && trip == cap) {
        status = InvalidArgumentError("a Loop was still running after ", cap, " trips, the cap (max_loop_trips)");
        break;
      }
      // An empty body still checks once per trip: a 2^62-trip loop must stop too.
      if (control_) {
        status = CheckRunControl(control_, issued_);
        if (!status.ok()) break;
      }
      if (l.condition() != nullptr) {
        StatusOr<uint64_t> condition = ReadScalar(*l.condition());
        if (!condition.ok()) {
          status = condition.status();
          break;
        }
        if (*condition == 0) break;
      }
      if (l.iteration() != nullptr) {
        status = queue_.Fill(Resolve(*l.iteration(), bases_), 8, trip, 8);
        if (!status.ok()) break;
      }
      status = Range(body, body + l.body_length());
    }
    --depth_;
    return status;
  }

  // A scalar (a bool byte, an i64) the device computed: the queue drains first.
  StatusOr<uint64_t> ReadScalar(const fb::Slot& slot) {
    uint64_t value = 0;
    HEXIR_RETURN_IF_ERROR(
        queue_.Copy(hal::CopyDirection::kDeviceToHost, &value, Resolve(slot, bases_), slot.length()));
    HEXIR_RETURN_IF_ERROR(queue_.Synchronize());
    return value;  // little-endian: a byte or an i64 reads the same
  }

  Status Timed(uint32_t index, const fb::Command& cmd) {
    using TimingClock = hal::CommandQueue::TimingClock;
    using Clock = std::chrono::steady_clock;
    Clock::time_point start;
    if (command_ms_) {
      start = Clock::now();
      HEXIR_RETURN_IF_ERROR(queue_.BeginTiming(TimingClock::kCommand));
    }
    HEXIR_RETURN_IF_ERROR(Issue(cmd));
    if (command_ms_) {
      HEXIR_RETURN_IF_ERROR(queue_.EndTiming(TimingClock::kCommand));
      HEXIR_RETURN_IF_ERROR(queue_.Synchronize());
      double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      HEXIR_ASSIGN_OR_RETURN(std::optional<double> device_ms, queue_.TimedMilliseconds(TimingClock::kCommand));
      command_ms_[index] += device_ms ? *device_ms : wall_ms;
      if (device_clock_) *device_clock_ = device_ms.has_value();
    }
    return Status::Ok();
  }

  Status Issue(const fb::Command& cmd) {
    switch (cmd.op_type()) {
      case fb::CommandOp::AllocCommand: {
        // The Session allocated its arenas when it was created; here their contents begin.
        if (!poison_) break;
        const auto* a = cmd.op_as_AllocCommand();
        uint64_t bytes = function_.arenas()->Get(a->arena())->bytes();
        if (bytes == 0) break;
        // A signalling NaN in every f32; a byte pattern where the arena is no multiple of 4.
        if (bytes % 4 == 0)
          HEXIR_RETURN_IF_ERROR(queue_.Fill(bases_.arenas[a->arena()], bytes, 0x7fa00000u, 4));
        else
          HEXIR_RETURN_IF_ERROR(queue_.Fill(bases_.arenas[a->arena()], bytes, 0xa5, 1));
        break;
      }
      case fb::CommandOp::FillCommand: {
        const auto* f = cmd.op_as_FillCommand();
        HEXIR_RETURN_IF_ERROR(queue_.Fill(Resolve(*f->target(), bases_), f->target()->length(), f->pattern(),
                                          f->pattern_length()));
        break;
      }
      case fb::CommandOp::CopyCommand: {
        const auto* c = cmd.op_as_CopyCommand();
        hal::DevicePtr target = Resolve(*c->target(), bases_);
        // A scan output: this trip's row (the reader checked the last trip's).
        if (c->target_stride() != 0 && depth_ > 0)
          target = static_cast<unsigned char*>(target) + c->target_stride() * trips_[depth_ - 1];
        // Both slots are device memory (arena, constants, bound inputs and outputs).
        HEXIR_RETURN_IF_ERROR(queue_.Copy(hal::CopyDirection::kDeviceToDevice, target, Resolve(*c->source(), bases_),
                                          c->target()->length()));
        break;
      }
      case fb::CommandOp::DispatchCommand: {
        const auto* d = cmd.op_as_DispatchCommand();
        uint32_t n = d->bindings()->size();
        for (uint32_t i = 0; i < n; ++i) bindings_[i] = Resolve(*d->bindings()->Get(i), bases_);
        const auto* wg = d->workgroups();
        HEXIR_RETURN_IF_ERROR(queue_.Dispatch(module_.library(d->library()), d->entry(),
                                              {wg->Get(0), wg->Get(1), wg->Get(2)},
                                              Span<const hal::DevicePtr>(bindings_.data(), n)));
        break;
      }
      default:
        return InternalError("unverified command type reached the interpreter");
    }
    return Status::Ok();
  }

  const Module& module_;
  const fb::Function& function_;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Command>>& commands_;
  const SpaceBases& bases_;
  std::vector<hal::DevicePtr>& bindings_;
  hal::CommandQueue& queue_;
  double* command_ms_;
  bool poison_;
  bool* device_clock_;
  const RunOptions* control_;
  uint64_t issued_ = 0;  // commands issued so far (for the message of a stopped run)
  // The trip of each loop around the command being issued, innermost last (no allocation).
  std::array<uint64_t, serializer::kMaxBodyNesting> trips_{};
  size_t depth_ = 0;
};

}  // namespace

Status Execute(const Module& module, const fb::Function& function, const SpaceBases& bases,
               std::vector<hal::DevicePtr>& bindings, hal::CommandQueue& queue, double* command_ms, bool poison,
               bool* device_clock, const RunOptions* control) {
  // Work issued before (a GPU's input copies) is not the first command's.
  if (command_ms) HEXIR_RETURN_IF_ERROR(queue.Synchronize());
  Replay replay(module, function, bases, bindings, queue, command_ms, poison, device_clock, control);
  return replay.Range(0, function.commands()->size());
}

Status CheckRunControl(const RunOptions* control, uint64_t commands) {
  if (control == nullptr) return Status::Ok();
  if (control->cancelled()) return CancelledError("the run was cancelled after ", commands, " commands");
  if (control->expired())
    return DeadlineExceededError("the run passed its deadline after ", commands, " commands");
  return Status::Ok();
}

bool HasControlFlow(const fb::Function& function) {
  for (const fb::Command* cmd : *function.commands())
    if (cmd->op_type() == fb::CommandOp::LoopCommand || cmd->op_type() == fb::CommandOp::IfCommand) return true;
  return false;
}

}  // namespace hexir::vm

#include "hal/command_graph.h"

#include <algorithm>

namespace hexir::hal {

namespace {

// Whether `a` and `b` are the same command but for pointers and a fill's pattern: what an
// instance can update in place.
bool SameShape(const RecordedCommand& a, const RecordedCommand& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case RecordedCommand::Kind::kDispatch:
      return a.executable == b.executable && a.entry == b.entry && a.workgroups.x == b.workgroups.x &&
             a.workgroups.y == b.workgroups.y && a.workgroups.z == b.workgroups.z &&
             a.binding_count == b.binding_count;
    case RecordedCommand::Kind::kFill: return a.length == b.length && a.pattern_length == b.pattern_length;
    case RecordedCommand::Kind::kCopy: return a.direction == b.direction && a.length == b.length;
  }
  return false;
}

}  // namespace

void CommandGraph::BeginPass() {
  cursor_ = 0;
  rerecord_ = !instantiated_;
  changed_.clear();
  in_pass_ = true;
}

Status CommandGraph::EndPass() {
  if (!in_pass_) return FailedPreconditionError("CommandGraph::EndPass without BeginPass");
  in_pass_ = false;
  // Fewer commands than recorded also changes the graph.
  if (cursor_ != commands_.size()) {
    rerecord_ = true;
    commands_.resize(cursor_);
    bindings_.resize(commands_.empty() ? 0 : commands_.back().first_binding + commands_.back().binding_count);
  }
  if (rerecord_) {
    instantiated_ = false;
    HEXIR_RETURN_IF_ERROR(Instantiate());
    instantiated_ = true;
    ++stats_.instantiations;
    // Later passes record which commands changed without allocating.
    changed_.reserve(commands_.size());
    return Status::Ok();
  }
  for (uint32_t index : changed_) {
    Status updated = UpdateCommand(index);
    if (!updated.ok()) {
      // The instance may hold some updates and not others: build it again before any launch.
      instantiated_ = false;
      return updated;
    }
  }
  stats_.node_updates += changed_.size();
  return Status::Ok();
}

Status CommandGraph::Launch(CommandQueue& queue) {
  if (in_pass_ || !instantiated_)
    return FailedPreconditionError("a CommandGraph is launched after a pass that ended well (EndPass)");
  HEXIR_RETURN_IF_ERROR(LaunchInstance(queue));
  ++stats_.launches;
  return Status::Ok();
}

RecordedCommand* CommandGraph::Match(const RecordedCommand& shape) {
  if (!rerecord_ && cursor_ < commands_.size() && SameShape(commands_[cursor_], shape)) return &commands_[cursor_];
  // From the first command that differs on, the pass records: the graph is rebuilt at EndPass.
  if (!rerecord_ || cursor_ < commands_.size()) {
    rerecord_ = true;
    commands_.resize(cursor_);
    bindings_.resize(commands_.empty() ? 0 : commands_.back().first_binding + commands_.back().binding_count);
  }
  return nullptr;
}

void CommandGraph::Record(const RecordedCommand& command, Span<const DevicePtr> bindings) {
  RecordedCommand recorded = command;
  recorded.first_binding = static_cast<uint32_t>(bindings_.size());
  recorded.binding_count = static_cast<uint32_t>(bindings.size());
  bindings_.insert(bindings_.end(), bindings.begin(), bindings.end());
  commands_.push_back(recorded);
}

Status CommandGraph::Issue(const RecordedCommand& command, Span<const DevicePtr> bindings) {
  if (!in_pass_) return FailedPreconditionError("a command issued on a CommandGraph outside BeginPass/EndPass");
  if (RecordedCommand* same = Match(command)) {
    // The same command but for its pointers (and a fill's pattern): the recording takes them,
    // and EndPass updates the instance.
    DevicePtr* held = bindings_.data() + same->first_binding;
    if (same->target != command.target || same->source != command.source || same->pattern != command.pattern ||
        !std::equal(bindings.begin(), bindings.end(), held)) {
      same->target = command.target;
      same->source = command.source;
      same->pattern = command.pattern;
      std::copy(bindings.begin(), bindings.end(), held);
      changed_.push_back(static_cast<uint32_t>(cursor_));
    }
  } else {
    Record(command, bindings);
  }
  ++cursor_;
  return Status::Ok();
}

Status CommandGraph::Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                              Span<const DevicePtr> bindings) {
  RecordedCommand command;
  command.kind = RecordedCommand::Kind::kDispatch;
  command.executable = &executable;
  command.entry = entry;
  command.workgroups = workgroups;
  command.binding_count = static_cast<uint32_t>(bindings.size());
  return Issue(command, bindings);
}

Status CommandGraph::Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) {
  HEXIR_RETURN_IF_ERROR(CheckFill(length, pattern_length));
  RecordedCommand command;
  command.kind = RecordedCommand::Kind::kFill;
  command.target = target;
  command.length = length;
  command.pattern = pattern;
  command.pattern_length = pattern_length;
  // Nothing to record: the same fill is empty in every pass.
  return length == 0 && in_pass_ ? Status::Ok() : Issue(command, {});
}

Status CommandGraph::Copy(CopyDirection direction, void* target, const void* source, uint64_t length) {
  RecordedCommand command;
  command.kind = RecordedCommand::Kind::kCopy;
  command.direction = direction;
  command.target = target;
  command.source = source;
  command.length = length;
  return length == 0 && in_pass_ ? Status::Ok() : Issue(command, {});
}

Status CommandGraph::Synchronize() {
  return FailedPreconditionError("a CommandGraph runs nothing until launched; synchronize the queue it runs on");
}

Status CommandGraph::BeginTiming(TimingClock) {
  return FailedPreconditionError("a CommandGraph is timed on the queue it is launched on");
}

Status CommandGraph::EndTiming(TimingClock) {
  return FailedPreconditionError("a CommandGraph is timed on the queue it is launched on");
}

Status ReplayGraph::LaunchInstance(CommandQueue& queue) {
  for (const RecordedCommand& c : commands()) {
    switch (c.kind) {
      case RecordedCommand::Kind::kDispatch:
        HEXIR_RETURN_IF_ERROR(queue.Dispatch(*c.executable, c.entry, c.workgroups, bindings(c)));
        break;
      case RecordedCommand::Kind::kFill:
        HEXIR_RETURN_IF_ERROR(queue.Fill(c.target, c.length, c.pattern, c.pattern_length));
        break;
      case RecordedCommand::Kind::kCopy:
        HEXIR_RETURN_IF_ERROR(queue.Copy(c.direction, c.target, c.source, c.length));
        break;
    }
  }
  return Status::Ok();
}

}  // namespace hexir::hal

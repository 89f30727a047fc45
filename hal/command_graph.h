// hal::CommandGraph: a run's commands recorded once and replayed with one launch (CUDA graphs:
// one cuGraphLaunch instead of a cuLaunchKernel per dispatch).
//
// A graph is itself a CommandQueue: the commands issued on it between BeginPass() and
// EndPass() are recorded, not run. The first pass records them and the device instantiates
// the graph. Every later pass (the same function, run again) is matched command by command
// against the recording: where only pointers changed (a caller bound other buffers), the
// graph's nodes are updated in place; where the commands themselves differ (a caller's input
// moved between host and device memory, so a copy appeared or vanished), the rest is
// recorded anew and the graph instantiated again. Launch() runs the instance on a queue.
//
// Ownership: owned by a session; the executables it dispatches must outlive it.
// Thread safety: thread-compatible (a session runs one request at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hal/buffer.h"
#include "hal/command_queue.h"
#include "hal/executable.h"

namespace hexir::hal {

struct RecordedCommand {
  enum class Kind : uint8_t { kDispatch, kFill, kCopy };
  Kind kind = Kind::kDispatch;
  // kDispatch: entry `entry` of `executable` with bindings_[first_binding, +binding_count).
  const Executable* executable = nullptr;
  uint32_t entry = 0;
  Workgroups workgroups;
  uint32_t first_binding = 0, binding_count = 0;
  // kFill: `length` bytes at `target` with `pattern`. kCopy: `length` bytes `source` -> `target`.
  DevicePtr target = nullptr;
  const void* source = nullptr;
  uint64_t length = 0;
  uint64_t pattern = 0;
  uint8_t pattern_length = 0;
  CopyDirection direction = CopyDirection::kDeviceToDevice;
};

// What a graph did over its life: a test (and a benchmark) tells an update from a re-record.
struct GraphStats {
  uint64_t instantiations = 0;  // recordings turned into an instance (first pass, changed commands)
  uint64_t node_updates = 0;    // commands whose pointers changed, updated in the instance
  uint64_t launches = 0;
};

class CommandGraph : public CommandQueue {
 public:
  // Starts a pass: the commands issued until EndPass() record or match the graph.
  void BeginPass();
  // Ends the pass: instantiates the graph where it is new or its commands changed, else
  // updates the nodes whose pointers changed. The graph is then ready to Launch().
  Status EndPass();
  // Runs the instance on `queue` (of the same device), ordered after what `queue` holds.
  Status Launch(CommandQueue& queue);

  const GraphStats& stats() const { return stats_; }
  Span<const RecordedCommand> commands() const { return Span<const RecordedCommand>(commands_); }
  Span<const DevicePtr> bindings(const RecordedCommand& command) const {
    return Span<const DevicePtr>(bindings_.data() + command.first_binding, command.binding_count);
  }

  Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                  Span<const DevicePtr> bindings) final;
  Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) final;
  Status Copy(CopyDirection direction, void* target, const void* source, uint64_t length) final;
  // A graph runs nothing until launched: nothing to wait for.
  Status Synchronize() final;
  // Device time is measured on the queue a graph is launched on, around the launch.
  Status BeginTiming(TimingClock) final;
  Status EndTiming(TimingClock) final;

 protected:
  // Builds the device's instance of commands() (dropping any earlier one).
  virtual Status Instantiate() = 0;
  // Command `index` kept its shape but changed pointers (bindings, targets, sources, a fill's
  // pattern): update its nodes in the instance.
  virtual Status UpdateCommand(size_t index) = 0;
  virtual Status LaunchInstance(CommandQueue& queue) = 0;

 private:
  // Records `command` with `bindings`, or matches it against the recording (Dispatch, Fill
  // and Copy build the command).
  Status Issue(const RecordedCommand& command, Span<const DevicePtr> bindings);
  // Where the pass stands against the recording: the next command's position, or, once a
  // command differed, recording from there on.
  RecordedCommand* Match(const RecordedCommand& shape);
  void Record(const RecordedCommand& command, Span<const DevicePtr> bindings);

  std::vector<RecordedCommand> commands_;
  std::vector<DevicePtr> bindings_;
  std::vector<uint32_t> changed_;  // commands to update at EndPass (reserved at instantiation)
  size_t cursor_ = 0;
  bool instantiated_ = false;
  bool rerecord_ = false;
  bool in_pass_ = false;
  GraphStats stats_;
};

// The graph of a device without graphs of its own (the host): its instance is the recording,
// which Launch() issues command by command on the queue. Sessions use it only when asked
// (SessionOptions::graphs = kOn); it keeps the record-and-update logic tested on every machine.
class ReplayGraph final : public CommandGraph {
 protected:
  Status Instantiate() override { return Status::Ok(); }
  Status UpdateCommand(size_t) override { return Status::Ok(); }
  Status LaunchInstance(CommandQueue& queue) override;
};

}  // namespace hexir::hal

// vm::Session: the execute phase behind hexir::Session (include/hexir/session.h). Create()
// allocates the arenas, the staging for inputs that arrive misaligned, and every per-run
// structure; Run() checks the bindings, replays the commands and allocates nothing.
//
// Ownership: borrows its vm::Module (the public Session keeps it alive).
// Thread safety: thread-compatible.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "hexir/session.h"
#include "hexir/span.h"
#include "hexir/status.h"
#include "hexir/types.h"
#include "vm/module.h"

namespace hexir::vm {

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Create(const Module& module, const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const FunctionInfo& info() const { return *info_; }
  // The bytes of all its arenas.
  uint64_t arena_bytes() const;
  std::optional<double> last_device_ms() const { return last_device_ms_; }
  std::vector<CommandProfile> profile() const;
  GraphStats graph_stats() const;

  Status Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs);

 private:
  Session(const Module& module, const FunctionInfo* info) : module_(module), info_(info) {}
  Status CheckBindings(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) const;
  // Issues a run's commands on the session's queue (input copies, dispatches, output copies),
  // the first two through the graph where the session has one; Run synchronizes once, after.
  Status Issue(Span<const TensorView> inputs, Span<const MutableTensorView> outputs);
  // Binds the caller's tensors and issues the function's commands on `queue`.
  Status IssueCommands(Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                       hal::CommandQueue& queue);

  const Module& module_;
  const FunctionInfo* info_;
  std::vector<hal::BufferPtr> arenas_;    // per arena of the function (nullptr when empty)
  std::vector<hal::DevicePtr> arena_bases_;
  // Per input and output: staging where the device cannot bind the caller's memory (made at
  // Create; nullptr where the device said none is needed).
  std::vector<hal::BufferPtr> input_staging_, output_staging_;
  // Pinned host memory each staged tensor is copied through (a GPU's), or null.
  std::vector<hal::HostStagingPtr> input_pinned_, output_pinned_;
  // Scratch reused by every Run(): per-space base pointers and a dispatch's bindings.
  std::vector<hal::DevicePtr> input_bases_, output_bases_, bindings_;
  // Its own queue (a CUDA stream): concurrent sessions do not wait for each other.
  std::unique_ptr<hal::CommandQueue> queue_;
  // The run recorded as a graph (SessionOptions::graphs), launched on queue_; null without.
  std::unique_ptr<hal::CommandGraph> graph_;
  // Set while a Run is under way: a second thread's Run on the same session is refused at
  // once instead of sharing the arena (one atomic exchange per Run, no lock).
  std::atomic<bool> running_{false};
  bool time_device_ = false;
  bool poison_ = false;  // SessionOptions::poison
  std::optional<double> last_device_ms_;
  // SessionOptions::profile: per command, its summed time (sized at Create), and the runs.
  std::vector<double> command_ms_;
  uint64_t profiled_runs_ = 0;
  bool profile_device_clock_ = false;  // the profile's times are the device's clock
};

}  // namespace hexir::vm

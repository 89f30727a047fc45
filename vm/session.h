// vm::Session: the execute phase behind hexir::Session (include/hexir/session.h). Create()
// allocates the arenas, the staging for inputs that arrive misaligned, and every per-run
// structure; Run() checks the bindings, replays the commands and allocates nothing.
//
// Ownership: borrows its vm::Module (the public Session keeps it alive).
// Thread safety: thread-compatible.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hexir/session.h"
#include "hexir/span.h"
#include "hexir/status.h"
#include "hexir/types.h"
#include "vm/buckets.h"
#include "vm/module.h"

namespace hexir::vm {

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Create(const Module& module, const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The default function's (SessionOptions::function).
  const FunctionInfo& info() const { return *functions_.front().info; }
  // The bytes of all its arenas (shared by its functions: the largest function's in each space).
  uint64_t arena_bytes() const;
  std::optional<double> last_device_ms() const { return last_device_ms_; }
  std::vector<CommandProfile> profile() const;
  GraphStats graph_stats() const;

  // Runs the default function, or `function` (one of SessionOptions::functions). A session of
  // shape buckets (SessionOptions::function names a --dim model function) runs the bucket
  // that fits the inputs (vm/buckets.h).
  // `control` (may be null) stops the run early (RunOptions).
  Status Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs, const RunOptions* control = nullptr);
  Status Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
             const RunOptions* control = nullptr);
  // The outputs' shapes of a Run on `inputs`.
  StatusOr<std::vector<std::vector<int64_t>>> OutputShapes(Span<const TensorView> inputs) const;

 private:
  // What a session keeps per function it runs; the arenas are the session's.
  struct FunctionState {
    const FunctionInfo* info = nullptr;
    std::vector<hal::DevicePtr> arena_bases;  // per arena of the function: the session's buffer of its space
    // Per input and output: staging where the device cannot bind the caller's memory (made at
    // Create; nullptr where the device said none is needed), and the pinned host memory each
    // staged tensor is copied through (a GPU's), or null.
    std::vector<hal::BufferPtr> input_staging, output_staging;
    std::vector<hal::HostStagingPtr> input_pinned, output_pinned;
    // Scratch reused by every Run(): per-space base pointers.
    std::vector<hal::DevicePtr> input_bases, output_bases;
    // The run recorded as a graph (SessionOptions::graphs), launched on the queue; null without.
    std::unique_ptr<hal::CommandGraph> graph;
    // SessionOptions::profile: per command, its summed time (sized at Create), and the runs.
    std::vector<double> command_ms;
    uint64_t profiled_runs = 0;
  };

  explicit Session(const Module& module) : module_(module) {}
  Status CheckBindings(const FunctionState& f, Span<const TensorView> inputs,
                       Span<const MutableTensorView> outputs) const;
  Status RunFunction(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                     const RunOptions* control);
  // RunFunction's work, the run's turn already held.
  Status RunHeld(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs);
  // A run of a session of shape buckets: the exact bucket, or the smallest holding the inputs
  // run on zero-padded copies, its outputs' leading rows copied to the caller's.
  Status RunBuckets(Span<const TensorView> inputs, Span<const MutableTensorView> outputs, const RunOptions* control);
  // Issues a run's commands on the session's queue (input copies, dispatches, output copies),
  // the first two through the function's graph where it has one; the caller synchronizes.
  Status Issue(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs);
  // Binds the caller's tensors and issues the function's commands on `queue`.
  Status IssueCommands(FunctionState& f, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
                       hal::CommandQueue& queue);

  const Module& module_;
  // The default function first, then the others SessionOptions::functions names.
  std::vector<FunctionState> functions_;
  // Per device memory space, the one buffer every function's arena in that space uses.
  std::vector<hal::BufferPtr> arenas_;
  std::vector<hal::DevicePtr> bindings_;  // a dispatch's bindings (the largest arity of any function)
  // Shape buckets: the group (members index functions_ in the same order: functions_[m]), and
  // what a padded run uses, made at Create: per input and output, host memory of the largest
  // bucket's size; the views onto it; each dimension's size in a run's inputs.
  std::optional<BucketGroup> buckets_;
  struct Padding {
    std::vector<std::vector<unsigned char>> inputs, outputs;
    std::vector<TensorView> input_views;
    std::vector<MutableTensorView> output_views;
    std::vector<int64_t> actual;
    std::vector<int64_t> shape;  // an output's shape being checked
  } padding_;
  // Its own queue (a CUDA stream): concurrent sessions do not wait for each other.
  std::unique_ptr<hal::CommandQueue> queue_;
  // Set while a Run is under way: a second thread's Run on the same session is refused at
  // once instead of sharing the arena (one atomic exchange per Run, no lock).
  std::atomic<bool> running_{false};
  // The run under way's RunOptions (null: none), set while it holds its turn.
  const RunOptions* control_ = nullptr;
  bool time_device_ = false;
  bool poison_ = false;  // SessionOptions::poison
  std::optional<double> last_device_ms_;
  bool profile_device_clock_ = false;  // the profile's times are the device's clock
};

}  // namespace hexir::vm

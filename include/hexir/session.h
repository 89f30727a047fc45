// Session: the execute phase of one function of a Module. Create() allocates the arena and
// every scratch structure once; Run() binds the caller's inputs (zero-copy when they are
// aligned to their element size, else copied into staging made at Create()) and writes the
// outputs straight into the caller's buffers. Run() makes no heap allocation.
//
// Ownership: a Session keeps its Module alive. Thread safety: thread-compatible: use one
// Session per thread; any number of Sessions may share one Module.
#pragma once

#include "hexir/export.h"
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hexir/module.h"
#include "hexir/span.h"
#include "hexir/status.h"
#include "hexir/types.h"

namespace hexir {

namespace vm {
class Session;
}  // namespace vm

struct SessionOptions {
  // The function Run(inputs, outputs) runs. A model function compiled as shape buckets
  // (hexir-compile --dim batch=1,4,16) names them all: each Run takes the bucket that fits its
  // inputs (the exact one, else the smallest that holds them, padded with zeros along the
  // leading axis and its outputs sliced back); inputs() and outputs() are the smallest's.
  std::string function = "main";
  // Other functions of the module the session runs too (Run(name, inputs, outputs)): they take
  // turns in the same arenas, sized for the largest of them, so a session for every shape bucket
  // of a model holds one bucket's memory, not their sum. Each keeps its own staging.
  std::vector<std::string> functions;
  // The most device memory the session may hold (its arenas and staging); 0: no limit but what
  // the device reports free.
  uint64_t memory_limit_bytes = 0;
  // Measure each run's commands with the device's own clock (CUDA events); read it with
  // Session::last_device_ms(). Off by default: timing adds two events per run.
  bool time_device = false;
  // Time every command of every Run (Session::profile()): each command is waited for before
  // the next starts, which serializes a GPU's queue; a GPU's commands are timed by its own
  // clock (CUDA events), the host's by the wall clock. Off by default.
  bool profile = false;
  // A debugging aid: at each ALLOC command (every run) fill the arena with a signalling-NaN
  // pattern (0x7fa00000 in every 4 bytes), so a kernel that reads a buffer before anything
  // wrote it computes NaNs (or garbage integers) instead of whatever was left there. Off by
  // default: it writes every arena byte once per run.
  bool poison = false;
  // Run as one recorded graph (CUDA graphs): the first Run records its commands and the device
  // instantiates them; each later Run launches the graph with one call, updating in place only
  // the commands whose pointers changed (the caller bound other device buffers). kAuto: where
  // the device gains from it (a GPU whose driver has graphs); kOn: on any device (the host
  // replays the recording; for tests); kOff: never. A profiling session times each command,
  // so it never uses a graph.
  enum class Graphs { kAuto, kOn, kOff };
  Graphs graphs = Graphs::kAuto;
};

// How one Run may be stopped before it ends. The run checks both before each command it issues
// and before each trip of a loop (an ONNX Loop whose trip count or condition comes from the
// inputs can run for ever): a stopped run returns CANCELLED or DEADLINE_EXCEEDED after the
// command under way (one kernel, or on a GPU the launches already queued) finishes, and its
// outputs hold whatever was written. A function without loops runs a bounded number of
// commands; one recorded as a graph (SessionOptions::graphs) is checked before its launch.
struct RunOptions {
  // Set by another thread (a server whose client went away) to stop the run.
  const std::atomic<bool>* cancel = nullptr;
  // The run stops once std::chrono::steady_clock passes it.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The most trips one Loop may run (0: no cap): a Loop whose trip count, read at run time
  // (from a request), asks for more stops the run before its first trip, and a while-loop
  // still running after that many stops then; INVALID_ARGUMENT saying so.
  uint64_t max_loop_trips = 0;

  bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
  bool expired() const { return deadline && std::chrono::steady_clock::now() >= *deadline; }
};

// What a session's graph did (SessionOptions::graphs): a run that records counts an
// instantiation; one whose caller bound other buffers, the commands it updated.
struct GraphStats {
  bool enabled = false;          // the session runs through a graph
  uint64_t instantiations = 0;   // recordings turned into a graph (the first Run, changed commands)
  uint64_t node_updates = 0;     // commands updated in place for other buffers
  uint64_t launches = 0;         // graph launches (one per Run)
};

// One command of a session's function, timed over the runs of a profiling session.
struct CommandProfile {
  uint32_t index = 0;       // its position in the function's commands
  std::string kind;         // "dispatch", "copy", "fill" or "alloc"
  std::string name;         // a dispatch's kernel entry point; empty for other commands
  std::vector<std::string> sources;  // a dispatch's source ops (ONNX node names), when recorded
  uint64_t workgroups = 0;  // a dispatch's workgroups (x * y * z); 0 for other commands
  double total_ms = 0;      // time summed over `runs`: the device's clock or the wall (device_clock)
  bool device_clock = false;  // timed by the device's own clock (CUDA events), not the host's wall
  uint64_t runs = 0;
};

class HEXIR_API Session {
 public:
  // NOT_FOUND when the module has no such function; RESOURCE_EXHAUSTED, naming both numbers,
  // when the session's memory exceeds options.memory_limit_bytes or what the device reports
  // free, or cannot be allocated.
  static StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Module> module,
                                                   const SessionOptions& options);
  static StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Module> module,
                                                   const std::string& function = "main");
  ~Session();

  // `inputs` and `outputs` in signature order, each matching its declared element type and
  // shape exactly: INVALID_ARGUMENT names the tensor, the expected and the actual type.
  Status Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs);
  // Runs `function`, SessionOptions::function or one of SessionOptions::functions (NOT_FOUND
  // otherwise, naming those it runs), with the same checks.
  Status Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs);
  // Either, stopped early as `options` says (CANCELLED, DEADLINE_EXCEEDED).
  Status Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs, const RunOptions& options);
  Status Run(std::string_view function, Span<const TensorView> inputs, Span<const MutableTensorView> outputs,
             const RunOptions& options);
  // The shapes Run gives the outputs for `inputs`: the signature's; for a session of shape
  // buckets, those of the bucket the inputs pick, sized as the inputs are (INVALID_ARGUMENT, as
  // Run, when no bucket takes them).
  StatusOr<std::vector<std::vector<int64_t>>> OutputShapes(Span<const TensorView> inputs) const;

  // The signature of SessionOptions::function (Module::inputs/outputs give the others').
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // The bytes of its arenas: shared by its functions, the largest function's in each space.
  uint64_t arena_bytes() const;
  // The device time of the last Run's commands (inputs staged, every dispatch), when the
  // session was made with SessionOptions::time_device on a device with a clock of its own (a
  // GPU); nullopt otherwise (the host runs commands on the caller's thread: wall time is the
  // time).
  std::optional<double> last_device_ms() const;
  // Per command of SessionOptions::function, in order: its time summed over every Run since
  // Create, when the session was made with SessionOptions::profile; empty otherwise.
  std::vector<CommandProfile> profile() const;
  GraphStats graph_stats() const;

 private:
  Session(std::shared_ptr<const Module> module, std::unique_ptr<vm::Session> impl);
  std::shared_ptr<const Module> module_;
  std::unique_ptr<vm::Session> impl_;
};

}  // namespace hexir

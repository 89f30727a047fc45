// hexir-run: loads a .hxb, binds .npy inputs, runs it on the host, writes or prints outputs;
// with --benchmark N, times N runs. A thin main over the public runtime API.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hexir/hexir.h"
#include "base/cli_args.h"
#include "tools/npy.h"
#include "tools/resident_io.h"
#include "tools/run_benchmark.h"

#include <cerrno>
#include <filesystem>

#include <sys/stat.h>

namespace {

constexpr const char* kUsage =
    "usage: hexir-run MODEL.hxb [--function NAME] [--input NAME=FILE.npy]...\n"
    "                 [--output NAME=FILE.npy]... [--verify-weights] [--copy-model] [--threads N]\n"
    "                 [--benchmark RUNS] [--in-place OUTPUT]... [--device NAME]\n"
    "                 [--memory-limit BYTES] [--profile] [--poison] [--graphs auto|on|off]\n"
    "                 [--resident | --no-resident] [--timeout SECONDS] [--max-trips N]\n"
    "Runs the function (default 'main') on --device (default 'host'; 'cuda' or 'cuda:N' for a\n"
    "GPU, with a model compiled for it). Without --output, prints each output's\n"
    "name, shape, dtype and first values. --benchmark times RUNS runs after a warm-up (inputs\n"
    "not given are zeros). --threads: worker threads per dispatch (default: every core).\n"
    "--in-place OUTPUT binds OUTPUT onto the buffer of the donated input it is tied to, so the\n"
    "module updates that input in place. --copy-model reads the model into private memory\n"
    "instead of mapping it (later changes of the file cannot affect the run). --memory-limit:\n"
    "the most device memory the session may hold (default: what the device has free).\n"
    "--profile times every command (each waited for before the next) and prints them, slowest\n"
    "first, with their share of the run (over the --benchmark runs and their warm-up when given).\n"
    "--poison fills every arena with signalling NaNs at its ALLOC (each run): a kernel reading\n"
    "a buffer before anything wrote it then computes NaNs (a debugging aid).\n"
    "--timeout stops the run (with --benchmark, all of its runs) after SECONDS (a loop whose trip\n"
    "count comes from an input can run for ever): exit status 3, and no output is written.\n"
    "--max-trips N: a Loop asking for more than N trips (its count read from the inputs), or a\n"
    "while-loop still running after N, stops the run with an error (exit status 1).\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "hexir-run: error: %s\n", message.c_str());
  return 1;
}

// A failed run: exit status 3 when --timeout stopped it (a script can tell a runaway model from
// a wrong invocation), 1 otherwise.
int FailRun(const hexir::Status& status) {
  Fail(status.message());
  return status.code() == hexir::StatusCode::kDeadlineExceeded ? 3 : 1;
}

bool SplitAssignment(const std::string& text, std::string* name, std::string* path) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  *name = text.substr(0, eq);
  *path = text.substr(eq + 1);
  return true;
}

// Whether two paths name one file: the same path once resolved, or (for existing files) the
// same inode, so a link or another spelling of a path counts too.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  if (!ea && !eb && ca == cb) return true;
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}


void PrintArray(const std::string& name, const hexir::npy::Array& a) {
  std::string text = hexir::DescribeTensor(a.element_type, hexir::Span<const int64_t>(a.shape));
  std::printf("%s: %s [", name.c_str(), text.c_str());
  uint64_t n = a.element_count(), shown = n < 8 ? n : 8;
  for (uint64_t i = 0; i < shown && a.element_type == hexir::ElementType::kF32; ++i)
    std::printf("%s%.6g", i ? ", " : "", static_cast<const float*>(a.data())[i]);
  std::printf("%s]\n", n > shown ? ", ..." : "");
}

}  // namespace

static int RunMain(int argc, char** argv) {
  std::string model, function = "main";
  std::map<std::string, std::string> input_files, output_files;
  hexir::ModuleOptions module_options;
  hexir::RuntimeOptions runtime_options;
  hexir::SessionOptions session_options;
  int64_t benchmark_runs = 0;
  double timeout_s = 0;  // --timeout; 0: none
  uint64_t max_trips = 0;  // --max-trips; 0: none
  std::optional<bool> resident;
  std::vector<std::string> in_place;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    std::string name, path;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("hexir-run %s\n", HEXIR_VERSION);
      return 0;
    } else if (arg == "--function") {
      if (!value) return Fail("--function needs a name");
      function = argv[++i];
    } else if (arg == "--input" || arg == "--output") {
      if (!value || !SplitAssignment(value, &name, &path)) return Fail(arg + " needs NAME=FILE.npy");
      ++i;
      auto& files = arg == "--input" ? input_files : output_files;
      if (!files.emplace(name, path).second) return Fail(arg + " '" + name + "' given twice");
    } else if (arg == "--copy-model") {
      module_options.load_mode = hexir::LoadMode::kCopy;
    } else if (arg == "--profile") {
      session_options.profile = true;
    } else if (arg == "--poison") {
      session_options.poison = true;
    } else if (arg == "--graphs") {
      std::string mode = value ? value : "";
      if (mode == "auto") session_options.graphs = hexir::SessionOptions::Graphs::kAuto;
      else if (mode == "on") session_options.graphs = hexir::SessionOptions::Graphs::kOn;
      else if (mode == "off") session_options.graphs = hexir::SessionOptions::Graphs::kOff;
      else return Fail("--graphs needs auto, on or off");
      ++i;
    } else if (arg == "--resident" || arg == "--no-resident") {
      resident = arg == "--resident";
    } else if (arg == "--verify-weights") {
      module_options.verify_weights = true;
    } else if (arg == "--threads") {
      int64_t n;
      if (!hexir::cli::ParseInteger(value, 0, 1024, &n)) return Fail("--threads needs a count from 0 to 1024");
      runtime_options.threads = static_cast<int>(n);
      ++i;
    } else if (arg == "--memory-limit") {
      int64_t n;
      if (!hexir::cli::ParseInteger(value, 1, INT64_MAX, &n))
        return Fail("--memory-limit needs a number of bytes from 1 to 2^63 - 1");
      session_options.memory_limit_bytes = static_cast<uint64_t>(n);
      ++i;
    } else if (arg == "--device") {
      if (!value) return Fail("--device needs a name (host, cuda, cuda:N)");
      runtime_options.device = argv[++i];
    } else if (arg == "--in-place") {
      if (!value) return Fail("--in-place needs an output name");
      in_place.push_back(argv[++i]);
    } else if (arg == "--timeout") {
      double seconds = 0;
      if (!hexir::cli::ParseSeconds(value, 1e9, &seconds) || !(seconds > 0))
        return Fail("--timeout needs a number of seconds above 0 (up to 1e9)");
      timeout_s = seconds;
      ++i;
    } else if (arg == "--max-trips") {
      int64_t n;
      if (!hexir::cli::ParseInteger(value, 1, INT64_MAX, &n))
        return Fail("--max-trips needs a number of trips from 1 to 2^63 - 1");
      max_trips = static_cast<uint64_t>(n);
      ++i;
    } else if (arg == "--benchmark") {
      if (!hexir::cli::ParseInteger(value, 1, 1000000, &benchmark_runs))
        return Fail("--benchmark needs a number of runs from 1 to 1000000");
      ++i;
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("unknown option '" + arg + "'\n" + kUsage);
    } else if (model.empty()) {
      model = arg;
    } else {
      return Fail("more than one model given ('" + model + "' and '" + arg + "')");
    }
  }
  if (model.empty()) return Fail(std::string("no model given\n") + kUsage);

  // The deadline counts from here: loading is part of what --timeout bounds.
  hexir::RunOptions control;
  control.max_loop_trips = max_trips;
  if (timeout_s > 0)
    control.deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  auto runtime = hexir::Runtime::Create(runtime_options);
  if (!runtime.ok()) return Fail(runtime.status().message());
  auto load_start = std::chrono::steady_clock::now();
  auto module = hexir::Module::Load(**runtime, model, module_options);
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  if (!module.ok()) return Fail(module.status().message());
  session_options.function = function;
  // --benchmark also reports device time where the device has a clock (CUDA events).
  session_options.time_device = benchmark_runs > 0;
  auto session = hexir::Session::Create(*module, session_options);
  if (!session.ok()) return Fail(session.status().message());

  const std::map<std::string, std::string> input_paths = input_files;
  std::vector<hexir::npy::Array> inputs;
  for (const hexir::TensorInfo& sig : (*session)->inputs()) {
    auto it = input_files.find(sig.name);
    if (it == input_files.end()) {
      if (benchmark_runs == 0) return Fail("missing input '" + sig.name + "': pass --input " + sig.name + "=FILE.npy");
      hexir::npy::Array zeros;  // benchmark inputs default to zeros
      zeros.element_type = sig.element_type;
      zeros.shape = sig.shape;
      zeros.Resize(sig.byte_size);
      inputs.push_back(std::move(zeros));
      continue;
    }
    auto array = hexir::npy::Read(it->second);
    if (!array.ok()) return Fail(array.status().message());
    hexir::npy::AdaptToInput(*array, sig.element_type);  // bf16 from float32 or its bits
    inputs.push_back(std::move(*array));
    input_files.erase(it);
  }
  if (!input_files.empty()) {
    std::string names;
    for (const hexir::TensorInfo& sig : (*session)->inputs()) names += (names.empty() ? "" : ", ") + sig.name;
    return Fail("no input named '" + input_files.begin()->first + "' (inputs: " + names + ")");
  }
  for (const auto& [name, path] : output_files) {
    bool found = false;
    for (const hexir::TensorInfo& sig : (*session)->outputs()) found |= sig.name == name;
    if (!found) return Fail("no output named '" + name + "'");
  }
  // No output may overwrite the model, an input or another output.
  for (auto it = output_files.begin(); it != output_files.end(); ++it) {
    if (SameFile(it->second, model))
      return Fail("output '" + it->first + "' would overwrite the model '" + model + "'");
    for (const auto& [name, path] : input_paths)
      if (SameFile(it->second, path))
        return Fail("output '" + it->first + "' would overwrite input '" + name + "' ('" + path + "')");
    for (auto other = std::next(it); other != output_files.end(); ++other)
      if (SameFile(it->second, other->second))
        return Fail("outputs '" + it->first + "' and '" + other->first + "' have the same file '" + it->second + "'");
  }
  std::vector<hexir::TensorView> input_views;
  for (const auto& a : inputs) input_views.push_back({a.data(), a.element_type, hexir::Span<const int64_t>(a.shape)});
  // The outputs' shapes follow the inputs' (a model compiled with --dim picks a shape bucket).
  auto output_shapes = (*session)->OutputShapes(hexir::Span<const hexir::TensorView>(input_views));
  if (!output_shapes.ok()) return Fail(output_shapes.status().message());
  std::vector<hexir::npy::Array> outputs;
  for (size_t o = 0; o < (*session)->outputs().size(); ++o) {
    const hexir::TensorInfo& sig = (*session)->outputs()[o];
    hexir::npy::Array out;
    out.element_type = sig.element_type;
    out.shape = (*output_shapes)[o];
    uint64_t bytes = hexir::ElementTypeSize(sig.element_type);
    for (int64_t d : out.shape) bytes *= static_cast<uint64_t>(d);
    out.Resize(bytes);
    outputs.push_back(std::move(out));
  }
  std::vector<hexir::MutableTensorView> output_views;
  for (auto& a : outputs) output_views.push_back({a.data(), a.element_type, hexir::Span<const int64_t>(a.shape)});
  for (const std::string& name : in_place) {
    const auto& outs = (*session)->outputs();
    size_t k = 0;
    while (k < outs.size() && outs[k].name != name) ++k;
    if (k == outs.size()) return Fail("--in-place: no output named '" + name + "'");
    if (outs[k].tied_input < 0)
      return Fail("--in-place: output '" + name + "' is not tied to a donated input (mark the input "
                  "{hexir.donate} and compute the output from it as its last use)");
    output_views[k].data = inputs[static_cast<size_t>(outs[k].tied_input)].data();
  }
  hexir::Span<const hexir::TensorView> in_span(input_views);
  hexir::Span<const hexir::MutableTensorView> out_span(output_views);

  // Device-resident I/O: by default for benchmarks on a device with memory of its own, whose
  // kernels are then timed without the host round trip (which gets its own line).
  bool use_resident = resident.value_or(benchmark_runs > 0 && (*runtime)->device_name() != "host");
  std::unique_ptr<hexir::tools::ResidentIo> resident_io;
  if (use_resident) {
    auto made = hexir::tools::ResidentIo::Create(**runtime, in_span, out_span);
    if (!made.ok()) return Fail(made.status().message());
    resident_io = std::move(*made);
  }

  if (benchmark_runs > 0) {
    hexir::tools::BenchmarkReport report, host_report;
    hexir::Status s = hexir::tools::RunBenchmark(**session, **module, resident_io ? resident_io->inputs() : in_span,
                                                 resident_io ? resident_io->outputs() : out_span,
                                                 static_cast<int>(benchmark_runs), load_ms, &report, control);
    if (s.ok() && resident_io)
      s = hexir::tools::RunBenchmark(**session, **module, in_span, out_span, static_cast<int>(benchmark_runs),
                                     load_ms, &host_report, control);
    if (!s.ok()) return FailRun(s);
    int threads = runtime_options.threads > 0 ? runtime_options.threads
                                              : static_cast<int>(std::thread::hardware_concurrency());
    hexir::tools::PrintBenchmark(report, threads, stdout);
    if (resident_io) hexir::tools::PrintHostRoundTrip(report, host_report, stdout);
    if (session_options.profile) hexir::tools::PrintProfile((*session)->profile(), stdout);
    return 0;
  }

  hexir::Status status = resident_io ? (*session)->Run(resident_io->inputs(), resident_io->outputs(), control)
                                     : (*session)->Run(in_span, out_span, control);
  if (status.ok() && resident_io) status = resident_io->CopyOutputsToHost(out_span);
  if (!status.ok()) return FailRun(status);
  if (session_options.profile) hexir::tools::PrintProfile((*session)->profile(), stdout);
  std::vector<std::pair<std::string, const hexir::npy::Array*>> files;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = (*session)->outputs()[i].name;
    auto it = output_files.find(name);
    // An output bound in place lives in its input's buffer.
    hexir::npy::Array& result =
        output_views[i].data == outputs[i].data()
            ? outputs[i]
            : inputs[static_cast<size_t>((*session)->outputs()[i].tied_input)];
    if (it != output_files.end())
      files.emplace_back(it->second, &result);
    else if (output_files.empty())
      PrintArray(name, result);
  }
  hexir::Status written = hexir::npy::WriteAll(files);  // all outputs or none
  if (!written.ok()) return Fail(written.message());
  // Everything the runtime allocated is returned when the session and module go.
  resident_io.reset();
  session->reset();
  module->reset();
  if ((*runtime)->live_buffers() != 0)
    return Fail("internal error: " + std::to_string((*runtime)->live_buffers()) + " device buffers (" +
                std::to_string((*runtime)->live_bytes()) + " bytes) outstanding after the session and module were destroyed");
  return 0;
}

// An allocation that fails (outputs as large as a crafted signature says, inputs read whole) is an
// error like any other, not an abort.
int main(int argc, char** argv) {
  try {
    return RunMain(argc, argv);
  } catch (const std::bad_alloc&) {
    return Fail("out of memory (an allocation failed)");
  }
}

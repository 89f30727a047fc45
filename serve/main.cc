// hexir-serve: serves Hexir executables over the Open Inference Protocol (KServe v2 REST).
//   hexir-serve --model NAME=model.hxb [--model ...] [--port 8000] [--host 127.0.0.1]
//               [--threads N] [--sessions N] [--max-queue N] [--device host|cuda]
//               [--max-connections N] [--header-timeout S] [--body-timeout S] [--idle-timeout S]
//               [--shutdown-grace S] [--request-timeout S] [--max-trips N] [--max-batch [NAME=]N]
//               [--batch-delay-us U]
//               [--model-repository DIR] [--repository-poll-s S] [--strict-readiness true|false]
//               [--memory-budget [NAME=]BYTES]
//               [--grpc-port N] [--grpc-max-message BYTES] [--grpc-max-inflight BYTES]
// A thin main over serve/: options, the runtime, one model pool per model, the server; SIGTERM
// or SIGINT stop accepting, answer what was received, and exit 0 (after at most the grace).
#include <cctype>
#include <cerrno>
#include <csignal>
#include <sys/resource.h>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "serve/batcher.h"
#ifdef HEXIR_SERVE_GRPC
#include "serve/grpc_server.h"
#endif
#include "serve/metrics.h"
#include "serve/model_registry.h"
#include "serve/model_repository.h"
#include "serve/server.h"
#include "base/cli_args.h"

namespace {

constexpr const char* kUsage =
    "usage: hexir-serve --model NAME=model.hxb [--model ...] [--model-repository DIR] [--port 8000]\n"
    "                   [--host 127.0.0.1] [--repository-poll-s 2]\n"
    "                   [--threads N] [--sessions N] [--max-queue N] [--device host|cuda]\n"
    "                   [--max-connections N] [--header-timeout S] [--body-timeout S]\n"
    "                   [--idle-timeout S] [--shutdown-grace S] [--request-timeout S] [--max-trips N]\n"
    "                   [--max-batch [NAME=]N] [--batch-delay-us U]\n"
    "Serves the models over the Open Inference Protocol (KServe v2 REST) and /metrics.\n"
    "--port 0 picks a free port (printed). --threads: workers answering complete requests\n"
    "(default 4; a client that sends or reads slowly holds none). --sessions: sessions per model\n"
    "(default 2); --max-queue: requests that may wait for a session (default 16; more: 503).\n"
    "--max-connections (default 1024; at the limit the connection idle the longest is closed).\n"
    "A request's headers must arrive within --header-timeout (default 10 s) of its first byte,\n"
    "all of it within --body-timeout (60 s): 408 otherwise; idle connections close after\n"
    "--idle-timeout (30 s). SIGTERM: requests begun may finish within --shutdown-grace (10 s),\n"
    "then their runs stop. A run stops after --request-timeout (60 s; 0: none; a gRPC client's\n"
    "own deadline if sooner): 504 / DEADLINE_EXCEEDED; and when its client goes away.\n"
    "--max-trips N: a request whose Loop asks for more than N trips (or a while-loop still\n"
    "running after N) is refused: 400 / INVALID_ARGUMENT (default: no cap).\n"
    "--max-batch N (every model) or NAME=N (one model; repeatable): dynamic batching: concurrent\n"
    "requests (each 1 or more rows along the leading axis) run together, up to N rows, once N rows\n"
    "wait or the oldest has waited\n"
    "--batch-delay-us (default 1000); the model must take 1 to N rows (compiled with shape\n"
    "buckets: hexir-compile --dim batch=1,4,16). Default 0: every request runs alone.\n"
    "--model-repository DIR: every NAME.hxb and NAME/model.hxb in DIR is model NAME, loaded at\n"
    "start; DIR is polled every --repository-poll-s (default 2; 0: never): new files load, files\n"
    "replaced (a rename) reload without dropping a request, removed ones unload; a file that does\n"
    "not load is reported and skipped. POST /v2/repository/index, .../models/NAME/load, /unload.\n"
    "A DIR that is missing or unreadable is refused at start. --strict-readiness true|false\n"
    "(default true): /v2/health/ready (and gRPC ServerReady) say not ready while a model of DIR\n"
    "failed to load and serves no version.\n"
    "--memory-budget [NAME=]BYTES (512M, 2G; repeatable): the most a model's constants and its\n"
    "sessions' arenas may take; a model over it is refused at load, saying why.\n"
    "--grpc-port N: the protocol's gRPC form (inference.GRPCInferenceService) on N too (0: a free\n"
    "port, printed); --grpc-max-message (default 64M): the largest request or response;\n"
    "--grpc-max-inflight (default 256M, at least --grpc-max-message): the memory gRPC may hold for\n"
    "messages of every call together (past it, it stops reading until some is released).\n";

int g_stop_pipe[2] = {-1, -1};

void OnSignal(int) {
  char c = 1;
  [[maybe_unused]] ssize_t n = ::write(g_stop_pipe[1], &c, 1);
}

// "1048576", "512K", "64M", "2G" (binary multiples) -> bytes; false for anything else.
bool ParseBytes(const std::string& text, uint64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15 || text.size() > digits + 1) return false;
  uint64_t value = std::stoull(text.substr(0, digits)), scale = 1;
  if (digits < text.size()) {
    char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text[digits])));
    scale = unit == 'K' ? 1ull << 10 : unit == 'M' ? 1ull << 20 : unit == 'G' ? 1ull << 30 : 0;
    if (scale == 0) return false;
  }
  *out = value * scale;
  return *out > 0;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "hexir-serve: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> models;
  hexir::serve::ServerOptions options;
  hexir::RuntimeOptions runtime_options;
  int64_t sessions = 2, max_queue = 16;
  hexir::serve::BatchOptions batch;
  std::string repository_dir;
  double repository_poll_s = 2;
  uint64_t budget_all = 0;
  std::map<std::string, int> max_batches;
  int grpc_port = -1;  // off
  int grpc_max_message = 64 * 1024 * 1024;
  uint64_t grpc_max_inflight = 256ull * 1024 * 1024;
  bool strict_readiness = true;
  std::map<std::string, uint64_t> budgets;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    int64_t n = 0;
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("hexir-serve %s\n", HEXIR_VERSION);
      return 0;
    } else if (arg == "--model" && value) {
      std::string text = argv[++i];
      size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return Fail("--model needs NAME=model.hxb, got '" + text + "'");
      if (!models.emplace(text.substr(0, eq), text.substr(eq + 1)).second)
        return Fail("model '" + text.substr(0, eq) + "' given twice");
    } else if (arg == "--port" && hexir::cli::ParseInteger(value, 0, 65535, &n)) {
      options.port = static_cast<int>(n);
      ++i;
    } else if (arg == "--host" && value) {
      options.host = argv[++i];
    } else if (arg == "--threads" && hexir::cli::ParseInteger(value, 1, 256, &n)) {
      options.threads = static_cast<int>(n);
      ++i;
    } else if (arg == "--sessions" && hexir::cli::ParseInteger(value, 1, 256, &n)) {
      sessions = n;
      ++i;
    } else if (arg == "--memory-budget" && value) {
      std::string text = argv[++i];
      size_t eq = text.find('=');
      uint64_t bytes = 0;
      if (!ParseBytes(eq == std::string::npos ? text : text.substr(eq + 1), &bytes) || eq == 0)
        return Fail("--memory-budget takes BYTES or NAME=BYTES (bytes, or with K, M or G), got '" + text + "'");
      if (eq == std::string::npos)
        budget_all = bytes;
      else
        budgets[text.substr(0, eq)] = bytes;
    } else if (arg == "--grpc-port" && hexir::cli::ParseInteger(value, 0, 65535, &n)) {
      grpc_port = static_cast<int>(n);
      ++i;
    } else if (arg == "--grpc-max-message" && value) {
      uint64_t bytes = 0;
      if (!ParseBytes(argv[++i], &bytes) || bytes > (1ull << 31) - 1)
        return Fail(std::string("--grpc-max-message takes bytes up to 2G - 1 (512K, 64M), got '") + argv[i] + "'");
      grpc_max_message = static_cast<int>(bytes);
    } else if (arg == "--grpc-max-inflight" && value) {
      if (!ParseBytes(argv[++i], &grpc_max_inflight) || grpc_max_inflight > (1ull << 40))
        return Fail(std::string("--grpc-max-inflight takes bytes up to 1T (256M, 1G), got '") + argv[i] + "'");
    } else if (arg == "--strict-readiness" && value) {
      std::string v = argv[++i];
      if (v != "true" && v != "false") return Fail("--strict-readiness takes true or false, got '" + v + "'");
      strict_readiness = v == "true";
    } else if (arg == "--model-repository" && value) {
      repository_dir = argv[++i];
    } else if (arg == "--repository-poll-s" && value) {
      char* end = nullptr;
      repository_poll_s = std::strtod(value, &end);
      if (end == value || *end != '\0' || !(repository_poll_s >= 0) || repository_poll_s > 86400)
        return Fail(std::string("--repository-poll-s takes seconds from 0 to 86400, got '") + value + "'");
      ++i;
    } else if (arg == "--max-batch" && value) {
      std::string text = argv[++i];
      size_t eq = text.find('=');
      std::string number = eq == std::string::npos ? text : text.substr(eq + 1);
      if (eq == 0 || !hexir::cli::ParseInteger(number.c_str(), 0, 4096, &n))
        return Fail("--max-batch takes N or NAME=N (0 to 4096), got '" + text + "'");
      if (eq == std::string::npos)
        batch.max_batch = static_cast<int>(n);
      else
        max_batches[text.substr(0, eq)] = static_cast<int>(n);
    } else if (arg == "--batch-delay-us" && hexir::cli::ParseInteger(value, 0, 10000000, &n)) {
      batch.delay_us = n;
      ++i;
    } else if (arg == "--max-queue" && hexir::cli::ParseInteger(value, 0, 1000000, &n)) {
      max_queue = n;
      ++i;
    } else if (arg == "--device" && value) {
      runtime_options.device = argv[++i];
    } else if (arg == "--max-connections" && hexir::cli::ParseInteger(value, 1, 1000000, &n)) {
      options.max_connections = static_cast<int>(n);
      ++i;
    } else if (arg == "--max-trips" && hexir::cli::ParseInteger(value, 1, INT64_MAX, &n)) {
      options.max_loop_trips = static_cast<uint64_t>(n);
      ++i;
    } else if (arg == "--request-timeout" && value) {
      double seconds = 0;
      if (!hexir::cli::ParseSeconds(value, 86400, &seconds))
        return Fail(arg + " needs seconds from 0 (none) to 86400, got '" + value + "'");
      options.request_timeout_s = seconds;
      ++i;
    } else if ((arg == "--header-timeout" || arg == "--body-timeout" || arg == "--idle-timeout" ||
                arg == "--shutdown-grace") && value) {
      double seconds = 0;
      if (!hexir::cli::ParseSeconds(value, 86400, &seconds) || seconds < 0.001)
        return Fail(arg + " needs seconds from 0.001 to 86400, got '" + value + "'");
      (arg == "--header-timeout" ? options.header_timeout_s
       : arg == "--body-timeout" ? options.body_timeout_s
       : arg == "--idle-timeout" ? options.idle_timeout_s
                                 : options.shutdown_grace_s) = seconds;
      ++i;
    } else {
      return Fail("bad or incomplete option '" + arg + "'\n" + kUsage);
    }
  }
  if (models.empty() && repository_dir.empty())
    return Fail(std::string("no --model or --model-repository given\n") + kUsage);
  // Descriptors: as many as the hard limit allows (the soft default, 1024, is below the
  // connections a server holds), and --max-connections lowered to fit what remains after a
  // reserve for model files, the repository and gRPC: running out made accept spin and the
  // repository poll see every model as gone.
  {
    rlimit nofile{};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
      if (nofile.rlim_cur < nofile.rlim_max) {
        rlimit raised = nofile;
        raised.rlim_cur = std::min<rlim_t>(nofile.rlim_max, rlim_t{1} << 20);
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) nofile = raised;
      }
      constexpr rlim_t kReserve = 128;
      if (nofile.rlim_cur != RLIM_INFINITY) {
        if (nofile.rlim_cur < kReserve + 16)
          return Fail("the process may open only " + std::to_string(nofile.rlim_cur) +
                      " descriptors (RLIMIT_NOFILE); hexir-serve needs at least " + std::to_string(kReserve + 16));
        rlim_t room = nofile.rlim_cur - kReserve;
        if (static_cast<rlim_t>(options.max_connections) > room) {
          std::fprintf(stderr,
                       "hexir-serve: --max-connections %d lowered to %llu: the process may open %llu descriptors "
                       "(RLIMIT_NOFILE), %llu kept for model files, the repository and gRPC\n",
                       options.max_connections, static_cast<unsigned long long>(room),
                       static_cast<unsigned long long>(nofile.rlim_cur), static_cast<unsigned long long>(kReserve));
          options.max_connections = static_cast<int>(room);
        }
      }
    }
  }
  auto runtime = hexir::Runtime::Create(runtime_options);
  if (!runtime.ok()) return Fail(runtime.status().message());
  hexir::serve::Metrics metrics;
  hexir::serve::PoolOptions pool_options;
  pool_options.sessions = static_cast<int>(sessions);
  pool_options.max_queue = static_cast<int>(max_queue);
  pool_options.batch = batch;
  pool_options.max_batches = max_batches;
  pool_options.memory_budget = budget_all;
  pool_options.memory_budgets = budgets;
  // A message the transport could never hold whole would stall its call.
  if (grpc_max_inflight < static_cast<uint64_t>(grpc_max_message))
    return Fail("--grpc-max-inflight " + std::to_string(grpc_max_inflight) + " is below --grpc-max-message " +
                std::to_string(grpc_max_message) + ": one message must fit");
  hexir::serve::ModelRegistry registry(**runtime, pool_options, &metrics);
  for (const auto& [name, path] : models) {
    hexir::Status loaded = registry.Load(name, path);
    if (!loaded.ok()) return Fail("model '" + name + "': " + loaded.message());
  }
  // A bad file in the repository is reported and skipped, not a reason to stop; a repository
  // that is not there (a typo, a volume not mounted) is (Triton refuses it too).
  std::unique_ptr<hexir::serve::ModelRepository> repository;
  if (!repository_dir.empty()) {
    struct stat st {};
    if (::stat(repository_dir.c_str(), &st) != 0)
      return Fail("--model-repository " + repository_dir + ": " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) return Fail("--model-repository " + repository_dir + ": not a directory");
    if (::access(repository_dir.c_str(), R_OK | X_OK) != 0)
      return Fail("--model-repository " + repository_dir + ": cannot read it: " + std::strerror(errno));
    repository = std::make_unique<hexir::serve::ModelRepository>(repository_dir, &registry, repository_poll_s);
  }
#ifdef HEXIR_SERVE_GRPC
  std::unique_ptr<hexir::serve::GrpcServer> grpc;
  if (grpc_port >= 0) {
    hexir::serve::GrpcOptions grpc_options;
    grpc_options.host = options.host;
    grpc_options.port = grpc_port;
    grpc_options.max_message_bytes = grpc_max_message;
    grpc_options.max_inflight_bytes = grpc_max_inflight;
    grpc_options.request_timeout_s = options.request_timeout_s;
    grpc_options.max_loop_trips = options.max_loop_trips;
    grpc_options.idle_timeout_s = options.idle_timeout_s;
    if (repository && strict_readiness)
      grpc_options.unready = [r = repository.get()] { return r->Unready(); };
    grpc = std::make_unique<hexir::serve::GrpcServer>(&registry, &metrics, grpc_options);
    if (!grpc->Start()) return Fail("cannot listen for gRPC on " + options.host + ":" + std::to_string(grpc_port));
    std::printf("hexir-serve: gRPC listening on %s:%d\n", options.host.c_str(), grpc->port());
  }
#else
  if (grpc_port >= 0) return Fail("--grpc-port: this hexir-serve was built without gRPC (libgrpc++-dev)");
#endif
  {
    hexir::serve::Server server(
        hexir::serve::ServedModels{&metrics, &registry, repository.get(), strict_readiness}, options);
    // Signals reach a thread that stops the server (Stop is not async-signal-safe).
    if (::pipe(g_stop_pipe) != 0) return Fail("cannot make the signal pipe");
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGINT, OnSignal);
    // Sockets are written with MSG_NOSIGNAL; a write to a closed pipe elsewhere is no reason
    // to die either.
    std::signal(SIGPIPE, SIG_IGN);
    std::thread stopper([&] {
      char c;
      while (::read(g_stop_pipe[0], &c, 1) < 0) {
      }
      server.Stop();
#ifdef HEXIR_SERVE_GRPC
      // At the same time as HTTP's: calls begun may finish within the grace, then are cancelled
      // (their runs stop within one command).
      if (grpc) grpc->Stop(options.shutdown_grace_s);
#endif
    });
    bool ok = server.Serve();
    OnSignal(0);  // wake the stopper if the server ended by itself
    stopper.join();
    if (!ok) return Fail("cannot listen on " + options.host + ":" + std::to_string(options.port));
  }
  std::printf("hexir-serve: stopped\n");
  return 0;
}

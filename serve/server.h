// The hexir-serve HTTP server: the Open Inference Protocol's REST endpoints over the model
// pools (on HttpServer: slow or idle clients hold no worker), GET /metrics, bounded queues,
// graceful shutdown, and the repository extension over a model folder.
//
//   GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/{name}, /v2/models/{name}/ready
//   POST /v2/models/{name}/infer   (JSON tensors)
//   POST /v2/repository/index, /v2/repository/models/{name}/load, .../unload
//   GET  /metrics
//
// Thread safety: Serve() runs the server on its worker threads until Stop() (any thread, or a
// signal handler through RequestStop()).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "serve/metrics.h"
#include "serve/model_pool.h"
#include "serve/model_registry.h"
#include "serve/model_repository.h"

namespace hexir::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;
  int threads = 4;  // workers answering complete requests
  int max_connections = 1024;
  double header_timeout_s = 10;  // a request's headers must arrive within this of its first byte
  double body_timeout_s = 60;    // the whole request within this
  double idle_timeout_s = 30;    // an idle keep-alive connection is closed after this
  double shutdown_grace_s = 10;  // after Stop(), requests begun may finish within this
  // A request's run stops after this (504); 0: never. Runs also stop when their client hangs
  // up or the shutdown grace ends (RunOptions).
  double request_timeout_s = 60;
  // The most trips one Loop of a request may run (RunOptions::max_loop_trips; 0: no cap).
  uint64_t max_loop_trips = 0;
};

// What the server serves; owned by the caller, outliving the server.
struct ServedModels {
  Metrics* metrics = nullptr;
  ModelRegistry* registry = nullptr;
  ModelRepository* repository = nullptr;  // null without --model-repository
  // /v2/health/ready is 503 while a repository model failed to load (--strict-readiness).
  bool strict_readiness = true;
};

class Server {
 public:
  Server(ServedModels models, ServerOptions options);
  ~Server();
  // Listens and serves until Stop(); false when the port cannot be bound.
  bool Serve();
  // Stops accepting; requests already received are answered first (within the grace).
  void Stop();
  int bound_port() const { return bound_port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int bound_port_ = 0;
};

}  // namespace hexir::serve

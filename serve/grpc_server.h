// The Open Inference Protocol over gRPC (inference.GRPCInferenceService, serve/grpc_service.proto)
// on gRPC's own server, beside the REST one: the same models (ModelRegistry), admission, batching
// and metrics. ModelInfer takes tensors as raw bytes (raw_input_contents) or as contents by type
// and answers with raw bytes (raw_output_contents), as Triton does. Errors carry the status a
// client checks: NOT_FOUND (no such model), INVALID_ARGUMENT (a tensor that does not fit the
// model, with REST's message), UNAVAILABLE (every session busy and the queue full: REST's 503),
// RESOURCE_EXHAUSTED (a message over --grpc-max-message), INTERNAL (a failed run). A call is
// admitted on its model name before its message is parsed, and the transport's memory for all
// calls is bounded (--grpc-max-inflight), as REST admits before reading a body.
//
// Thread safety: Start and Stop from one thread; gRPC runs the calls on its own threads.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "serve/metrics.h"
#include "serve/model_registry.h"

namespace hexir::serve {

struct GrpcOptions {
  std::string host = "127.0.0.1";
  int port = 0;                              // 0: a free one (port() says which)
  int max_message_bytes = 64 * 1024 * 1024;  // requests and responses
  // The memory gRPC's transport may hold for every call together (messages being read and
  // written); at least max_message_bytes.
  uint64_t max_inflight_bytes = 256ull * 1024 * 1024;
  // A call's run stops after this (DEADLINE_EXCEEDED), or at the client's own deadline if
  // sooner; 0: only the client's. A call the client cancels, or that the shutdown grace ends,
  // stops too (CANCELLED).
  double request_timeout_s = 60;
  // The most trips one Loop of a request may run (RunOptions::max_loop_trips; 0: no cap).
  uint64_t max_loop_trips = 0;
  // Why the server is not ready ("" when it is): ServerReady answers false while it says so.
  std::function<std::string()> unready;
  // A connection without calls closes after this (as REST's --idle-timeout): gRPC 1.51 has no
  // cap on connections, so idle ones must not pile up.
  double idle_timeout_s = 30;
};

class GrpcServer {
 public:
  GrpcServer(ModelRegistry* registry, Metrics* metrics, GrpcOptions options);
  ~GrpcServer();
  // Listens; false (with the reason on stderr) when the address cannot be bound.
  bool Start();
  int port() const { return port_; }
  // Stops accepting; calls in progress finish within `grace_s`.
  void Stop(double grace_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace hexir::serve

// ModelPool: one model served: loaded once (weights resident once), a fixed pool of sessions
// (one per worker), and a bounded number of requests admitted beyond them. A request is
// admitted before its body is parsed (Admit), so at most sessions + max_queue requests hold
// parsed tensors at once; one that finds every session busy and the queue full is refused at
// once (the server answers 503) instead of growing memory. Built on the public embedding API
// only (include/hexir/).
//
// Thread safety: thread-safe; a Lease gives its holder one session until it is destroyed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hexir/hexir.h"
#include "serve/batcher.h"
#include "serve/metrics.h"
#include "serve/protocol.h"

namespace hexir::serve {

class ModelPool {
 public:
  // Loads `path` on `runtime` and makes `sessions` sessions of its "main" function. With
  // `batch.max_batch` > 1, requests are batched (Batcher) once StartBatching is called: the
  // model must take any number of rows from 1 to max_batch along the leading axis of every
  // input and output (shape buckets: hexir-compile --dim batch=1,4,16), else INVALID_ARGUMENT.
  // With `memory_budget` (bytes; 0: none), a model whose constants and sessions' arenas need
  // more is refused (RESOURCE_EXHAUSTED), the message giving the parts and the compiler's plan.
  static StatusOr<std::unique_ptr<ModelPool>> Create(const Runtime& runtime, const std::string& name,
                                                     const std::string& path, int sessions, int max_queue,
                                                     const BatchOptions& batch = {},
                                                     LoadMode load_mode = LoadMode::kMap, uint64_t memory_budget = 0);
  ~ModelPool();
  // Starts the batching threads (one per session), their figures going to `stats`; a no-op
  // without batching. Requests then go through batcher() instead of Acquire.
  void StartBatching(Metrics::Model* stats);
  Batcher* batcher() const { return batcher_.get(); }

  class Lease {
   public:
    Lease() = default;
    Lease(ModelPool* pool, Session* session) : pool_(pool), session_(session) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), session_(other.session_) { other.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Session* operator->() const { return session_; }
    explicit operator bool() const { return pool_ != nullptr; }

   private:
    ModelPool* pool_ = nullptr;
    Session* session_ = nullptr;
  };

  // Admission: one of the sessions + max_queue places of requests in flight (parsing, waiting
  // or running), held until destroyed; an empty ticket when every place is taken.
  class Ticket {
   public:
    Ticket() = default;
    explicit Ticket(ModelPool* pool) : pool_(pool) {}
    Ticket(Ticket&& other) noexcept : pool_(other.pool_) { other.pool_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();
    explicit operator bool() const { return pool_ != nullptr; }

   private:
    ModelPool* pool_ = nullptr;
  };
  Ticket Admit();

  // A free session for an admitted request, waiting for one if every session is busy (there
  // are at most max_queue such waiters: admission bounds them), as long as `control` lets it
  // (an empty lease, and why, otherwise).
  Lease Acquire(const Ticket& ticket, const RunOptions& control = {}, Status* why = nullptr);

  // Runs an admitted request: `rows` rows along the batch axis (0: the signature's shapes) of
  // `inputs`, one buffer per input; `outputs` gets one per output. With batching, with other
  // requests' rows (Batcher); otherwise on a session of its own.
  // `control` stops the wait for a session and the run (RunOptions). Batched requests run with
  // other clients' rows and ignore it (not yet bounded).
  Status Infer(const Ticket& ticket, int64_t rows, const std::vector<std::vector<unsigned char>>& inputs,
               std::vector<std::vector<unsigned char>>* outputs, const RunOptions& control = {});

  const std::string& name() const { return signature_.model_name; }
  const Module& module() const { return *module_; }
  const ModelSignature& signature() const { return signature_; }
  const std::vector<TensorInfo>& inputs() const { return signature_.input_info; }
  const std::vector<TensorInfo>& outputs() const { return signature_.output_info; }
  uint64_t arena_bytes() const { return arena_bytes_; }
  int waiting() const;

 private:
  ModelPool() = default;
  void Release(Session* session);

  ModelSignature signature_;
  BatchOptions batch_;
  std::shared_ptr<const Module> module_;
  std::vector<std::unique_ptr<Session>> sessions_;
  uint64_t arena_bytes_ = 0;
  int max_queue_ = 0;
  int in_flight_ = 0;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<Session*> free_;
  int waiting_ = 0;
  std::unique_ptr<Batcher> batcher_;  // last: its threads use the sessions
};

}  // namespace hexir::serve

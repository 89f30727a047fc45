// Batcher: dynamic batching of one model's requests (Triton's dynamic batcher). Requests whose
// inputs differ only in their leading (batch) dimension wait in one queue; each of the model's
// sessions has a thread that takes the oldest requests, as many as fit `max_batch` rows, once
// that many rows are waiting or the oldest has waited `delay`, stacks their inputs along the
// leading axis, runs them as one (the session picks the smallest shape bucket that holds the
// rows: hexir-compile --dim batch=...), and splits the outputs back by rows. Each request's
// outputs equal its own run's: rows of a batch do not mix (the model computes each row alone,
// as a batch dimension's padding already requires).
//
// Thread safety: Run may be called from any thread; the destructor drains nothing (the server
// stops its workers first) and joins the session threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "hexir/hexir.h"
#include "serve/metrics.h"

namespace hexir::serve {

struct BatchOptions {
  int max_batch = 0;      // rows a run may stack; 0 or 1: no batching
  int64_t delay_us = 1000;  // how long the oldest request waits for others
};

class Batcher {
 public:
  // What runs a batch: a session's Run (ModelPool), or a test's.
  using RunFn = std::function<Status(Span<const TensorView>, Span<const MutableTensorView>, const RunOptions&)>;

  // One thread per runner (each a session, owned by the caller, outliving this) of a model
  // whose every input and output has the batch as its leading dimension; `inputs` and
  // `outputs` its signature (the smallest bucket's: the bytes of a row are its bytes over its
  // leading dimension). `stats` receives each batch's size, queue and compute times.
  Batcher(std::vector<RunFn> runners, std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs,
          BatchOptions options, Metrics::Model* stats);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Runs `rows` rows (`inputs`: one buffer per model input, rows x its row bytes) with whatever
  // other requests are waiting; `outputs` receives one buffer per model output, rows x its row
  // bytes. Blocks until done. A request still waiting when `control` stops it (its deadline, its
  // client gone) leaves the queue with DEADLINE_EXCEEDED or CANCELLED; a batch runs until the
  // latest deadline of its requests (others' rows are in it: one client going away stops none).
  Status Run(int64_t rows, const std::vector<std::vector<unsigned char>>& inputs,
             std::vector<std::vector<unsigned char>>* outputs, const RunOptions& control = {});

  int waiting() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Item {
    int64_t rows;
    const std::vector<std::vector<unsigned char>>* inputs;
    std::vector<std::vector<unsigned char>>* outputs;
    Clock::time_point queued;
    const RunOptions* control;
    Status status;
    bool done = false;
  };

  void Loop(const RunFn& run);
  // Runs `batch` (taken off the queue) with `run` and gives each item its rows or the error.
  void RunBatch(const RunFn& run, std::vector<Item*>& batch);

  std::vector<TensorInfo> inputs_, outputs_;
  std::vector<uint64_t> input_row_bytes_, output_row_bytes_;
  BatchOptions options_;
  Metrics::Model* stats_;
  mutable std::mutex mu_;
  std::condition_variable queued_, done_;
  std::deque<Item*> queue_;
  int64_t queued_rows_ = 0;
  bool stopping_ = false;
  std::vector<RunFn> runners_;
  std::vector<std::thread> threads_;
};

}  // namespace hexir::serve

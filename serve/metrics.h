// Prometheus metrics of hexir-serve (GET /metrics, text format 0.0.4): per model, requests,
// failures and a latency histogram, and with dynamic batching a histogram of batch sizes, the
// time requests waited for a batch and the time batches ran; queue depth, arena and constant
// bytes are read from the model pools when scraped.
// Thread safety: thread-safe (atomics).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace hexir::serve {

class ModelPool;

class Metrics {
 public:
  // Upper bounds of the latency buckets, in seconds (then +Inf).
  static constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025, 0.05, 0.1, 0.25, 1.0};
  // Upper bounds of the batch-size buckets, in rows (then +Inf).
  static constexpr std::array<int, 8> kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128};
  struct Model {
    std::atomic<uint64_t> requests{0}, failures{0}, rejected{0};
    std::array<std::atomic<uint64_t>, kBuckets.size() + 1> latency{};
    std::atomic<uint64_t> latency_sum_us{0};
    bool batching = false;  // set before serving: the batch metrics are printed for it
    // Dynamic batching (Batcher): runs by their rows, the rows and requests they carried, the
    // time requests waited in the queue and the time the runs took.
    std::array<std::atomic<uint64_t>, kBatchBuckets.size() + 1> batch_size{};
    std::atomic<uint64_t> batch_rows{0}, batched_requests{0}, queue_us{0}, compute_us{0};
  };

  Model& For(const std::string& model);  // adds it the first time (a model loaded while serving)
  void Observe(const std::string& model, double seconds, bool ok);
  // One batch of `rows` rows from `requests` requests, which waited `queued_seconds` in all,
  // run in `compute_seconds`.
  static void ObserveBatch(Model& m, int64_t rows, size_t requests, double queued_seconds, double compute_seconds);
  std::string Text(const std::vector<std::pair<std::string, std::shared_ptr<ModelPool>>>& pools) const;

 private:
  mutable std::mutex mu_;  // models_ (a Model itself is atomics, and never moves)
  std::map<std::string, std::unique_ptr<Model>> models_;
};

}  // namespace hexir::serve

#include "serve/metrics.h"

#include <sstream>

#include "serve/model_pool.h"

namespace hexir::serve {

Metrics::Model& Metrics::For(const std::string& model) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& m = models_[model];
  if (!m) m = std::make_unique<Model>();
  return *m;
}

void Metrics::Observe(const std::string& model, double seconds, bool ok) {
  Model& m = For(model);
  m.requests.fetch_add(1);
  if (!ok) m.failures.fetch_add(1);
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  m.latency[b].fetch_add(1);
  m.latency_sum_us.fetch_add(static_cast<uint64_t>(seconds * 1e6));
}

void Metrics::ObserveBatch(Model& m, int64_t rows, size_t requests, double queued_seconds, double compute_seconds) {
  size_t b = 0;
  while (b < kBatchBuckets.size() && rows > kBatchBuckets[b]) ++b;
  m.batch_size[b].fetch_add(1);
  m.batch_rows.fetch_add(static_cast<uint64_t>(rows));
  m.batched_requests.fetch_add(requests);
  m.queue_us.fetch_add(static_cast<uint64_t>(queued_seconds * 1e6));
  m.compute_us.fetch_add(static_cast<uint64_t>(compute_seconds * 1e6));
}

std::string Metrics::Text(const std::vector<std::pair<std::string, std::shared_ptr<ModelPool>>>& pools) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream os;
  os << "# HELP hexir_requests_total Inference requests answered, by model.\n# TYPE hexir_requests_total counter\n";
  for (const auto& [name, m] : models_) os << "hexir_requests_total{model=\"" << name << "\"} " << m->requests << "\n";
  os << "# HELP hexir_failures_total Inference requests that failed (4xx or 5xx).\n# TYPE hexir_failures_total counter\n";
  for (const auto& [name, m] : models_) os << "hexir_failures_total{model=\"" << name << "\"} " << m->failures << "\n";
  os << "# HELP hexir_rejected_total Requests refused with 503 because the queue was full.\n"
        "# TYPE hexir_rejected_total counter\n";
  for (const auto& [name, m] : models_) os << "hexir_rejected_total{model=\"" << name << "\"} " << m->rejected << "\n";
  os << "# HELP hexir_request_seconds Inference latency.\n# TYPE hexir_request_seconds histogram\n";
  for (const auto& [name, m] : models_) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets.size(); ++b) {
      cumulative += m->latency[b];
      os << "hexir_request_seconds_bucket{model=\"" << name << "\",le=\"" << kBuckets[b] << "\"} " << cumulative << "\n";
    }
    cumulative += m->latency[kBuckets.size()];
    os << "hexir_request_seconds_bucket{model=\"" << name << "\",le=\"+Inf\"} " << cumulative << "\n";
    os << "hexir_request_seconds_sum{model=\"" << name << "\"} " << m->latency_sum_us / 1e6 << "\n";
    os << "hexir_request_seconds_count{model=\"" << name << "\"} " << cumulative << "\n";
  }
  os << "# HELP hexir_batch_rows Rows of each batch run (dynamic batching).\n# TYPE hexir_batch_rows histogram\n";
  for (const auto& [name, m] : models_) {
    if (!m->batching) continue;
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBatchBuckets.size(); ++b) {
      cumulative += m->batch_size[b];
      os << "hexir_batch_rows_bucket{model=\"" << name << "\",le=\"" << kBatchBuckets[b] << "\"} " << cumulative
         << "\n";
    }
    cumulative += m->batch_size[kBatchBuckets.size()];
    os << "hexir_batch_rows_bucket{model=\"" << name << "\",le=\"+Inf\"} " << cumulative << "\n";
    os << "hexir_batch_rows_sum{model=\"" << name << "\"} " << m->batch_rows << "\n";
    os << "hexir_batch_rows_count{model=\"" << name << "\"} " << cumulative << "\n";
  }
  os << "# HELP hexir_batch_requests_total Requests run in batches.\n# TYPE hexir_batch_requests_total counter\n";
  for (const auto& [name, m] : models_)
    if (m->batching) os << "hexir_batch_requests_total{model=\"" << name << "\"} " << m->batched_requests << "\n";
  os << "# HELP hexir_batch_queue_seconds_total Time requests waited to be batched, summed.\n"
        "# TYPE hexir_batch_queue_seconds_total counter\n";
  for (const auto& [name, m] : models_)
    if (m->batching) os << "hexir_batch_queue_seconds_total{model=\"" << name << "\"} " << m->queue_us / 1e6 << "\n";
  os << "# HELP hexir_batch_compute_seconds_total Time batches ran, summed.\n"
        "# TYPE hexir_batch_compute_seconds_total counter\n";
  for (const auto& [name, m] : models_)
    if (m->batching) os << "hexir_batch_compute_seconds_total{model=\"" << name << "\"} " << m->compute_us / 1e6 << "\n";
  os << "# HELP hexir_queue_depth Requests waiting for a session.\n# TYPE hexir_queue_depth gauge\n";
  for (const auto& [name, pool] : pools) os << "hexir_queue_depth{model=\"" << name << "\"} " << pool->waiting() << "\n";
  os << "# HELP hexir_arena_bytes Arena bytes of one session.\n# TYPE hexir_arena_bytes gauge\n";
  for (const auto& [name, pool] : pools) os << "hexir_arena_bytes{model=\"" << name << "\"} " << pool->arena_bytes() << "\n";
  os << "# HELP hexir_constant_bytes Constant bytes of the model (resident once).\n# TYPE hexir_constant_bytes gauge\n";
  for (const auto& [name, pool] : pools)
    os << "hexir_constant_bytes{model=\"" << name << "\"} " << pool->module().constant_bytes() << "\n";
  return os.str();
}

}  // namespace hexir::serve

// ModelRegistry: the models a server serves, by name, each replaceable while it serves. A
// request takes a reference to its model's pool (Find) and keeps it to the end: loading a new
// version swaps the pointer, unloading removes it, and the old pool is freed when its last
// request is answered. Loading reads and checks the whole file before anything is swapped, so
// a bad file leaves the model already serving as it was.
//
// Thread safety: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hexir/hexir.h"
#include "serve/batcher.h"
#include "serve/metrics.h"
#include "serve/model_pool.h"

namespace hexir::serve {

// What every model of a server is loaded with.
struct PoolOptions {
  int sessions = 2;
  int max_queue = 16;
  BatchOptions batch;
  std::map<std::string, int> max_batches;  // per model by name (--max-batch NAME=N), else batch's
  // Bytes a model's constants and sessions may take (--memory-budget): per model by name, else
  // the default; 0: no budget.
  uint64_t memory_budget = 0;
  std::map<std::string, uint64_t> memory_budgets;
};

class ModelRegistry {
 public:
  // `runtime` and `metrics` outlive the registry.
  ModelRegistry(const Runtime& runtime, PoolOptions options, Metrics* metrics)
      : runtime_(runtime), options_(options), metrics_(metrics) {}

  // Loads `path` as model `name` (a new one, or a new version replacing the one serving), its
  // batching started; on failure the registry is unchanged and the error names the file.
  // kCopy: the model never sees later writes to the file (a watched folder's files may be
  // overwritten in place, which a mapped model would read, or die of when truncated).
  Status Load(const std::string& name, const std::string& path, LoadMode mode = LoadMode::kMap);
  // Stops serving `name` (requests in flight finish on it); false when it was not loaded.
  bool Unload(const std::string& name);

  std::shared_ptr<ModelPool> Find(const std::string& name) const;
  std::vector<std::pair<std::string, std::shared_ptr<ModelPool>>> All() const;

 private:
  const Runtime& runtime_;
  PoolOptions options_;
  Metrics* metrics_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ModelPool>> models_;
};

}  // namespace hexir::serve

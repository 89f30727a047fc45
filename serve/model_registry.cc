#include "serve/model_registry.h"

namespace hexir::serve {

Status ModelRegistry::Load(const std::string& name, const std::string& path, LoadMode mode) {
  // Outside the lock: loading reads the file and makes the sessions; requests go on meanwhile.
  auto budget = options_.memory_budgets.find(name);
  BatchOptions batch = options_.batch;
  if (auto own = options_.max_batches.find(name); own != options_.max_batches.end()) batch.max_batch = own->second;
  auto pool = ModelPool::Create(runtime_, name, path, options_.sessions, options_.max_queue, batch, mode,
                                budget != options_.memory_budgets.end() ? budget->second : options_.memory_budget);
  if (!pool.ok()) return pool.status();
  std::shared_ptr<ModelPool> loaded = std::move(*pool);
  loaded->StartBatching(&metrics_->For(name));
  std::shared_ptr<ModelPool> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::exchange(models_[name], loaded);
  }
  return Status::Ok();  // `old` is freed here, or by its last request
}

bool ModelRegistry::Unload(const std::string& name) {
  std::shared_ptr<ModelPool> old;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return false;
  old = std::move(it->second);
  models_.erase(it);
  return true;
}

std::shared_ptr<ModelPool> ModelRegistry::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, std::shared_ptr<ModelPool>>> ModelRegistry::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {models_.begin(), models_.end()};
}

}  // namespace hexir::serve

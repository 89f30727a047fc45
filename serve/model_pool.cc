#include "serve/model_pool.h"

namespace hexir::serve {

StatusOr<std::unique_ptr<ModelPool>> ModelPool::Create(const Runtime& runtime, const std::string& name,
                                                       const std::string& path, int sessions, int max_queue) {
  std::unique_ptr<ModelPool> pool(new ModelPool());
  pool->signature_.model_name = name;
  pool->max_queue_ = max_queue;
  HEXIR_ASSIGN_OR_RETURN(pool->module_, Module::Load(runtime, path));
  HEXIR_ASSIGN_OR_RETURN(pool->signature_.input_info, pool->module_->inputs("main"));
  HEXIR_ASSIGN_OR_RETURN(pool->signature_.output_info, pool->module_->outputs("main"));
  for (int i = 0; i < sessions; ++i) {
    HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(pool->module_));
    pool->arena_bytes_ = session->arena_bytes();
    pool->free_.push_back(session.get());
    pool->sessions_.push_back(std::move(session));
  }
  return pool;
}

ModelPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(session_);
}

ModelPool::Ticket::~Ticket() {
  if (pool_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pool_->mu_);
  --pool_->in_flight_;
}

ModelPool::Ticket ModelPool::Admit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_ >= static_cast<int>(sessions_.size()) + max_queue_) return Ticket();
  ++in_flight_;
  return Ticket(this);
}

ModelPool::Lease ModelPool::Acquire(const Ticket& ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ticket) return Lease();
  if (free_.empty()) {
    ++waiting_;
    freed_.wait(lock, [&] { return !free_.empty(); });
    --waiting_;
  }
  Session* session = free_.back();
  free_.pop_back();
  return Lease(this, session);
}

void ModelPool::Release(Session* session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(session);
  }
  freed_.notify_one();
}

int ModelPool::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

}  // namespace hexir::serve

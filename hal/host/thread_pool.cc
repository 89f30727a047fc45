#include "hal/host/thread_pool.h"

#include <algorithm>

namespace hexir::hal {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks() {
  while (true) {
    uint32_t begin = next_.fetch_add(chunk_);
    if (begin >= n_) return;
    fn_(ctx_, begin, std::min(n_, begin + chunk_));
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunChunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(uint32_t n, ChunkFn fn, void* ctx) {
  if (n == 0) return;
  if (workers_.empty() || n == 1 || !busy_.try_lock()) {
    fn(ctx, 0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    // A few chunks per thread balance uneven work without much contention.
    uint32_t pieces = static_cast<uint32_t>(threads()) * 4;
    chunk_ = std::max<uint32_t>(1, (n + pieces - 1) / pieces);
    next_.store(0);
    active_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  RunChunks();
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return active_ == 0; });
  }
  busy_.unlock();
}

}  // namespace hexir::hal

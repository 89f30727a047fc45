#include "hal/host/thread_pool.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HEXIR_PAUSE() _mm_pause()
#else
#define HEXIR_PAUSE() std::this_thread::yield()
#endif

namespace hexir::hal {
namespace {

// How long a thread spins for the next loop (or for the workers) before it blocks.
constexpr auto kSpin = std::chrono::microseconds(100);

// Spins until `ready()` or kSpin has passed; returns whether `ready()` held. It yields the core
// every 64 turns: with more threads than cores (another process, several sessions), the thread
// it waits for may need this core.
template <typename Ready>
bool SpinUntil(Ready ready) {
  auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 1;; ++i) {
    if (ready()) return true;
    HEXIR_PAUSE();
    if ((i & 63) == 0) {
      if (std::chrono::steady_clock::now() - start > kSpin) return ready();
      std::this_thread::yield();
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads) : shares_(new Share[static_cast<size_t>(std::max(threads, 1))]) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks(int self) {
  int t = threads();
  for (int k = 0; k < t; ++k) {
    Share& share = shares_[static_cast<size_t>((self + k) % t)];
    while (true) {
      // Piece i covers [i * n / pieces, (i + 1) * n / pieces): sizes differ by at most one.
      uint32_t piece = share.next.fetch_add(1, std::memory_order_relaxed);
      if (piece >= share.end) break;
      auto begin = static_cast<uint32_t>(uint64_t{piece} * n_ / pieces_);
      auto end = static_cast<uint32_t>((uint64_t{piece} + 1) * n_ / pieces_);
      fn_(ctx_, begin, end);
    }
  }
}

void ThreadPool::WorkerLoop(int self) {
  uint64_t seen = 0;
  while (true) {
    auto next = [&] { return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen; };
    if (!SpinUntil(next)) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, next);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    RunChunks(self);
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_one();
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
    // One piece per workgroup (kernels have at most 64, each tens of microseconds of work),
    // the threads' shares contiguous: 10 workgroups split 5:5, not as 8 pieces of 1 or 2
    // that could go 6:4; a thread that finishes early takes pieces from the others' shares.
    int t = threads();
    pieces_ = std::min<uint32_t>(n, static_cast<uint32_t>(t) * 64);
    // Thread i's share: pieces [i * pieces / t, (i + 1) * pieces / t).
    auto bound = [&](int i) { return static_cast<uint32_t>(uint64_t{pieces_} * static_cast<uint64_t>(i) / static_cast<uint64_t>(t)); };
    for (int i = 0; i < t; ++i) {
      shares_[static_cast<size_t>(i)].next.store(bound(i), std::memory_order_relaxed);
      shares_[static_cast<size_t>(i)].end = bound(i + 1);
    }
    active_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    // Publishes the loop to spinning workers (release) and to sleeping ones (the mutex).
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  RunChunks(0);
  auto finished = [&] { return active_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, finished);
  }
  busy_.unlock();
}

}  // namespace hexir::hal

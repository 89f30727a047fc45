// ThreadPool: a fixed set of worker threads that run one parallel loop at a time.
//
// ParallelFor(n, fn, ctx) calls fn(ctx, begin, end) over disjoint chunks covering [0, n), on
// the workers and the calling thread, and returns when all are done. It allocates nothing.
// Each thread first runs its own contiguous share of the pieces (the same share on every run,
// so a thread finds its weights and rows in its own cache again, and consecutive workgroups
// that share data stay on one thread), then takes what is left of the others' shares.
// When another ParallelFor is already running (two sessions on two threads), the caller runs
// its loop alone rather than wait: sessions never block each other.
//
// Workers spin for a short while (tens of microseconds) after a loop before they sleep, and the
// caller spins before it waits for them: a model runs one loop per dispatch, and waking a
// sleeping thread for each costs more than a small dispatch does.
//
// Ownership: joins its threads on destruction. Thread safety: ParallelFor is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hexir::hal {

class ThreadPool {
 public:
  using ChunkFn = void (*)(void* ctx, uint32_t begin, uint32_t end);

  // `threads` counts the caller: 1 means no workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  void ParallelFor(uint32_t n, ChunkFn fn, void* ctx);

 private:
  void WorkerLoop(int self);
  // Runs pieces of the current loop: its own range first, then what is left of the others'.
  void RunChunks(int self);
  // One thread's share of the current loop: pieces [next, end) still to run. Aligned so two
  // threads' counters never share a cache line.
  struct alignas(64) Share {
    std::atomic<uint32_t> next{0};
    uint32_t end = 0;
  };

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the thread whose loop the workers serve
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::atomic<uint64_t> generation_{0};  // written under mu_, read by spinning workers
  std::atomic<bool> stop_{false};
  // The current loop: `pieces_` pieces of [0, n_), thread i's share in shares_[i].
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  uint32_t n_ = 0, pieces_ = 1;
  std::unique_ptr<Share[]> shares_;
  std::atomic<int> active_{0};  // workers still in the current loop
};

}  // namespace hexir::hal

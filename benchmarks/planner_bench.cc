// Planner benchmark (not a test): prints ratios against baselines measured in the same run.
//
//   planner_bench [MINIMALLOC_DIR] [--time-limit SECONDS] [--threads N] [--orders AT,TWA-,...] [--smoke]
//
// 1. MiniMalloc's challenging instances (../shared/benchmarks/minimalloc by default): the
//    largest-first best-fit baseline against the lower bound, whether Hexir's solver fits
//    the 1,048,576-byte capacity within the time limit (default 5 s each), and the arena it
//    minimizes to without a capacity in the same time (anytime: proven optimal, or how far
//    above the bound).
// 2. 100,000 random buffers on the best-fit path: seconds, against a baseline of sorting the
//    same buffers (the unavoidable O(n log n) part).
// --smoke (CI): instance A only, 1 s limit, and 10,000 random buffers; seconds, no figures checked.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "base/file_mapping.h"
#include "planner/best_fit.h"
#include "planner/csv.h"
#include "planner/lower_bound.h"
#include "planner/solver.h"
#include "planner/verifier.h"

using namespace hexir::planner;
using Clock = std::chrono::steady_clock;

static double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

int main(int argc, char** argv) {
  std::string dir = HEXIR_DEFAULT_MINIMALLOC_DIR;
  double time_limit = 5.0;
  int threads = 1;
  std::vector<std::string> orders;  // --orders: try other search portfolios (exact_search.cc)
  bool smoke = false;
  bool time_limit_given = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
      time_limit = std::atof(argv[++i]);
      time_limit_given = true;
    }
    else if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
    else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--orders") == 0 && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t p = 0; p <= list.size();) {
        size_t q = std::min(list.find(',', p), list.size());
        orders.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    }
    else dir = argv[i];
  }
  if (smoke && !time_limit_given) time_limit = 1.0;
  const char last_instance = smoke ? 'A' : 'K';
  const int random_buffers = smoke ? 10000 : 100000;
  const uint64_t kCapacity = 1048576;
  std::printf("== MiniMalloc challenging instances, capacity %llu, time limit %.1f s, %d search thread(s)\n",
              static_cast<unsigned long long>(kCapacity), time_limit, threads);
  std::printf("%-4s %6s %10s %16s %10s %8s %8s %12s %10s %s\n", "inst", "bufs", "lower", "best-fit(size)", "hexir",
              "fits", "seconds", "minimized", "x lower", "quality");
  int fitted = 0, total = 0, bf_fitted = 0;
  for (char c = 'A'; c <= last_instance; ++c) {
    std::string path = dir + "/" + c + ".1048576.csv";
    auto text = hexir::ReadFileToString(path);
    if (!text.ok()) {
      std::printf("%c    (missing: %s)\n", c, path.c_str());
      continue;
    }
    auto problem = ParseMiniMallocCsv(*text);
    if (!problem.ok()) {
      std::printf("%c    %s\n", c, problem.status().message().c_str());
      continue;
    }
    ++total;
    uint64_t lb = MaxLoadLowerBound(*problem)[0];
    auto bf = SolveBestFit(*problem, BestFitOrder::kSizeDecreasing);
    uint64_t bf_size = bf.ok() ? bf->space_sizes[0] : 0;
    bf_fitted += bf_size <= kCapacity;
    problem->capacities = {kCapacity};
    SolveOptions options;
    options.time_limit_seconds = time_limit;
    options.search_threads = threads;
    options.search_orders = orders;
    Clock::time_point t0 = Clock::now();
    auto solved = Solve(*problem, options);
    double secs = Seconds(t0);
    bool fits = solved.ok() && Verify(*problem, solved->plan).ok();
    fitted += fits;
    char bf_text[32], hx_text[32];
    std::snprintf(bf_text, sizeof(bf_text), "%.3fx", static_cast<double>(bf_size) / lb);
    if (fits)
      std::snprintf(hx_text, sizeof(hx_text), "%.3fx", static_cast<double>(solved->spaces[0].arena_bytes) / lb);
    else
      std::snprintf(hx_text, sizeof(hx_text), "-");
    // Minimized: the same search without a capacity, every plan found tightening the target.
    problem->capacities.clear();
    auto minimized = Solve(*problem, options);
    bool min_ok = minimized.ok() && Verify(*problem, minimized->plan).ok();
    uint64_t min_bytes = min_ok ? minimized->spaces[0].arena_bytes : 0;
    std::printf("%-4c %6zu %10llu %16s %10s %8s %8.3f %12llu %9.4fx %s\n", c, problem->buffers.size(),
                static_cast<unsigned long long>(lb), bf_text, hx_text, fits ? "yes" : "no", secs,
                static_cast<unsigned long long>(min_bytes), static_cast<double>(min_bytes) / lb,
                min_ok ? minimized->spaces[0].Quality().c_str() : "FAILED");
    if (!min_ok) return 1;
  }
  std::printf("fitted %d of %d (best-fit(size) fits %d)\n\n", fitted, total, bf_fitted);

  std::printf("== %d random buffers, best-fit path\n", random_buffers);
  std::mt19937_64 rng(2026);
  Problem big;
  for (int i = 0; i < random_buffers; ++i) {
    BufferRequest b;
    b.first = static_cast<int64_t>(rng() % random_buffers);
    b.last = b.first + static_cast<int64_t>(rng() % 64);
    b.size = 64 * (1 + rng() % 1024);
    b.alignment = 64;
    big.buffers.push_back(b);
  }
  Clock::time_point t0 = Clock::now();
  std::vector<size_t> idx(big.buffers.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return big.buffers[a].size > big.buffers[b].size; });
  double sort_secs = Seconds(t0);
  t0 = Clock::now();
  auto plan = SolveBestFit(big, BestFitOrder::kSizeDecreasing);
  double bf_secs = Seconds(t0);
  SolveOptions bf_only;
  bf_only.exact_search = false;
  t0 = Clock::now();
  auto all = Solve(big, bf_only);
  double all_secs = Seconds(t0);
  if (!plan.ok() || !all.ok()) {
    std::fprintf(stderr, "best-fit failed: %s\n", (plan.ok() ? all.status() : plan.status()).ToString().c_str());
    return 1;
  }
  uint64_t lb = MaxLoadLowerBound(big)[0];
  bool verifies = Verify(big, all->plan).ok();
  std::printf("sort baseline %.3f s; best-fit(size) %.3f s (%.1fx the sort), arena %.3fx lower bound\n",
              sort_secs, bf_secs, bf_secs / sort_secs, static_cast<double>(plan->space_sizes[0]) / lb);
  std::printf("Solve() with all best-fit orderings: %.3f s, arena %.3fx lower bound; verifies: %s\n", all_secs,
              static_cast<double>(all->spaces[0].arena_bytes) / lb,
              verifies ? "yes" : "NO");
  return verifies ? 0 : 1;
}

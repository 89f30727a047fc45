#include "tools/run_benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace hexir::tools {

Status RunBenchmark(Session& session, const Module& module, Span<const TensorView> inputs,
                    Span<const MutableTensorView> outputs, int runs, double load_ms, BenchmarkReport* report) {
  using Clock = std::chrono::steady_clock;
  int warmup = std::min(10, runs / 10 + 1);
  for (int i = 0; i < warmup; ++i) HEXIR_RETURN_IF_ERROR(session.Run(inputs, outputs));
  std::vector<double> ms(static_cast<size_t>(runs)), device_ms;
  device_ms.reserve(static_cast<size_t>(runs));
  Clock::time_point start = Clock::now(), last_progress = start;
  for (int i = 0; i < runs; ++i) {
    Clock::time_point t0 = Clock::now();
    HEXIR_RETURN_IF_ERROR(session.Run(inputs, outputs));
    Clock::time_point t1 = Clock::now();
    ms[static_cast<size_t>(i)] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (std::optional<double> device = session.last_device_ms()) device_ms.push_back(*device);
    if (t1 - last_progress > std::chrono::seconds(1)) {
      std::fprintf(stderr, "\r  run %d/%d (%.0f s)", i + 1, runs, std::chrono::duration<double>(t1 - start).count());
      last_progress = t1;
    }
  }
  if (last_progress != start) std::fprintf(stderr, "\n");
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  report->runs = runs;
  report->load_ms = load_ms;
  report->min_ms = sorted.front();
  report->median_ms = sorted[sorted.size() / 2];
  report->p90_ms = sorted[std::min(sorted.size() - 1, sorted.size() * 9 / 10)];
  if (!device_ms.empty()) {
    std::sort(device_ms.begin(), device_ms.end());
    report->device_runs = static_cast<int>(device_ms.size());
    report->device_min_ms = device_ms.front();
    report->device_median_ms = device_ms[device_ms.size() / 2];
  }
  report->arena_bytes = session.arena_bytes();
  report->constant_bytes = module.constant_bytes();
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  report->peak_rss_kib = usage.ru_maxrss;
  return Status::Ok();
}

void PrintBenchmark(const BenchmarkReport& r, int threads, FILE* out) {
  std::fprintf(out,
               "load: %.3f ms\nruns: %d (threads %d)\nlatency: median %.4f ms, p90 %.4f ms, min %.4f ms\n"
               "arena: %llu bytes\nconstants: %llu bytes\npeak RSS: %ld KiB\n",
               r.load_ms, r.runs, threads, r.median_ms, r.p90_ms, r.min_ms,
               static_cast<unsigned long long>(r.arena_bytes), static_cast<unsigned long long>(r.constant_bytes),
               r.peak_rss_kib);
  if (r.device_runs > 0)
    std::fprintf(out, "device time: median %.4f ms, min %.4f ms (%d runs, the device's clock)\n", r.device_median_ms,
                 r.device_min_ms, r.device_runs);
}

}  // namespace hexir::tools

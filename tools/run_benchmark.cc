#include "tools/run_benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace hexir::tools {

Status RunBenchmark(Session& session, const Module& module, Span<const TensorView> inputs,
                    Span<const MutableTensorView> outputs, int runs, double load_ms, BenchmarkReport* report,
                    const RunOptions& control) {
  using Clock = std::chrono::steady_clock;
  int warmup = std::min(10, runs / 10 + 1);
  for (int i = 0; i < warmup; ++i) HEXIR_RETURN_IF_ERROR(session.Run(inputs, outputs, control));
  std::vector<double> ms(static_cast<size_t>(runs)), device_ms;
  device_ms.reserve(static_cast<size_t>(runs));
  Clock::time_point start = Clock::now(), last_progress = start;
  for (int i = 0; i < runs; ++i) {
    Clock::time_point t0 = Clock::now();
    HEXIR_RETURN_IF_ERROR(session.Run(inputs, outputs, control));
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
  report->graphs = session.graph_stats();
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
  if (r.graphs.enabled)
    std::fprintf(out, "graph: %llu launches, %llu recorded, %llu commands updated\n",
                 static_cast<unsigned long long>(r.graphs.launches),
                 static_cast<unsigned long long>(r.graphs.instantiations),
                 static_cast<unsigned long long>(r.graphs.node_updates));
  else
    std::fprintf(out, "graph: off (each command issued)\n");
}

void PrintHostRoundTrip(const BenchmarkReport& resident, const BenchmarkReport& host, FILE* out) {
  std::fprintf(out, "host round trip: median %.4f ms with host buffers (%+.4f ms over device-resident)",
               host.median_ms, host.median_ms - resident.median_ms);
  if (host.device_runs > 0) std::fprintf(out, "; device time %.4f ms", host.device_median_ms);
  std::fprintf(out, "\n");
}

void PrintProfile(const std::vector<CommandProfile>& profile, FILE* out) {
  double total = 0;
  for (const CommandProfile& p : profile) total += p.total_ms;
  std::vector<const CommandProfile*> order;
  for (const CommandProfile& p : profile) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const CommandProfile* a, const CommandProfile* b) { return a->total_ms > b->total_ms; });
  uint64_t runs = profile.empty() ? 0 : profile.front().runs;
  bool device_clock = !profile.empty() && profile.front().device_clock;
  std::fprintf(out, "profile: %zu commands, %.4f ms per run (%llu runs, each command waited for; %s)\n",
               profile.size(), runs ? total / static_cast<double>(runs) : 0.0, static_cast<unsigned long long>(runs),
               device_clock ? "device time, CUDA events" : "host wall time");
  std::fprintf(out, "  %5s %-8s %10s %6s %6s  %s\n", "#", "kind", "ms/run", "share", "wgs", "entry  [source ops]");
  for (const CommandProfile* p : order) {
    // The source ops (ONNX node names) the dispatch computes: the first few, then how many more.
    std::string sources;
    for (size_t i = 0; i < p->sources.size() && i < 4; ++i) sources += (i ? ", " : "") + p->sources[i];
    if (p->sources.size() > 4) sources += ", +" + std::to_string(p->sources.size() - 4) + " more";
    std::fprintf(out, "  %5u %-8s %10.4f %5.1f%% %6llu  %s%s%s%s\n", p->index, p->kind.c_str(),
                 runs ? p->total_ms / static_cast<double>(runs) : 0.0, total > 0 ? 100.0 * p->total_ms / total : 0.0,
                 static_cast<unsigned long long>(p->workgroups), p->name.c_str(), sources.empty() ? "" : "  [",
                 sources.c_str(), sources.empty() ? "" : "]");
  }
}

}  // namespace hexir::tools

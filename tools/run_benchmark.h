// The timing loop behind `hexir-run --benchmark N`: warm-up, N timed runs, and a report of
// the load time, median and p90 latency (wall time, and device time where the device keeps a
// clock of its own), arena and constant bytes and peak RSS. A progress
// line goes to stderr during runs longer than a second. Also the table of `--profile`.
#pragma once

#include <cstdio>
#include <vector>

#include "hexir/session.h"
#include "hexir/status.h"

namespace hexir::tools {

struct BenchmarkReport {
  double load_ms = 0;
  double median_ms = 0, p90_ms = 0, min_ms = 0;
  // The device's own clock (a GPU; the session made with SessionOptions::time_device): the
  // commands of each run without the host's launch overhead. device_runs 0: none.
  double device_median_ms = 0, device_min_ms = 0;
  int device_runs = 0;
  int runs = 0;
  GraphStats graphs;  // the session's graph, over warm-up and timed runs
  uint64_t arena_bytes = 0, constant_bytes = 0;
  long peak_rss_kib = 0;
};

Status RunBenchmark(Session& session, const Module& module, Span<const TensorView> inputs,
                    Span<const MutableTensorView> outputs, int runs, double load_ms, BenchmarkReport* report,
                    const RunOptions& control = {});
void PrintBenchmark(const BenchmarkReport& report, int threads, FILE* out);
// After a device-resident benchmark (`resident`): the same runs with the caller's host buffers
// (`host`), whose inputs and outputs cross to the device and back each run.
void PrintHostRoundTrip(const BenchmarkReport& resident, const BenchmarkReport& host, FILE* out);
// A profiling session's commands (SessionOptions::profile), slowest first: time per run, share
// of all commands' time, workgroups and kernel entry.
void PrintProfile(const std::vector<CommandProfile>& profile, FILE* out);

}  // namespace hexir::tools

// A compiled function's memory plan, explained: where each buffer lives and dies, what shares
// memory with what, and how far the arena is from the lower bound. Rendered as a table
// (hexir-compile --print-plan), JSON (--plan-json) and SVG (--plan-svg: offset over time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hexir::planner {

struct ReportBuffer {
  std::string name;
  uint64_t size = 0;
  uint64_t offset = 0;
  int64_t first = 0, last = 0;  // dispatch indices in the final schedule, inclusive
  std::string alias_of;         // the buffer whose memory it took over in place, or ""
};

// A value moved out of the arena's memory space and back (memory-space assignment): its
// buffer's bytes are copied to `to_space` after dispatch `out_after` and back before dispatch
// `in_before`, freeing the arena in between.
struct ReportMove {
  std::string name;
  uint64_t size = 0;
  int64_t out_after = 0, in_before = 0;
  std::string to_space;   // empty: recomputed (its dispatch runs again) instead of moved
};

struct PlanReport {
  std::string function;
  uint64_t arena_bytes = 0;
  uint64_t lower_bound_bytes = 0;        // max-load bound of the final schedule, after in-place
  uint64_t lower_bound_before_sharing = 0;  // ... before in-place sharing
  uint64_t naive_bytes = 0;              // one allocation per value (no reuse, no views)
  uint64_t constant_bytes = 0;           // stored constant pool
  uint64_t filled_constant_bytes = 0;    // splat constants (a few bytes each in the file)
  uint64_t peak_program_order = 0;       // live-memory peak before scheduling
  uint64_t peak_scheduled = 0;           // ... after memory-aware scheduling
  std::string method;                    // the solver that produced the plan
  std::string quality;                   // "optimal", or how far from the bound (SpaceReport::Quality)
  uint64_t capacity_bytes = 0;           // what the arena may use (budget less constants); 0: unbounded
  std::vector<ReportBuffer> buffers;
  std::vector<ReportMove> moves;         // values moved out and back to fit the capacity
  uint64_t moved_bytes = 0;              // bytes those copies move, both ways
  uint64_t recomputed_bytes = 0;         // bytes written again by rematerialized dispatches
  double transfer_seconds = 0;           // their cost by the machine file's transfer rates
  double recompute_seconds = 0;          // the rematerialized dispatches' time by the processor's rates
  // Copies the runtime makes between host memory and an arena the host cannot address (a GPU):
  // the constants once at load, the inputs and outputs every run; times by the machine file's
  // rates (0 when it gives none). Empty space name: the host addresses the arena.
  std::string host_link_space;
  uint64_t upload_once_bytes = 0, upload_per_run_bytes = 0, download_per_run_bytes = 0;
  double upload_once_seconds = 0, per_run_transfer_seconds = 0;

  double fragmentation() const {
    return arena_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(lower_bound_bytes) / arena_bytes;
  }
};

std::string FormatPlanTable(const PlanReport& report);
// {"arena_bytes", "lower_bound_bytes", "constant_bytes", "buffers": [{"name", "size",
//  "offset", "first", "last", "alias_of"}]} plus the other summary fields.
std::string FormatPlanJson(const PlanReport& report);
std::string FormatPlanSvg(const PlanReport& report);
// An executable's plans: one function's as above; several as {"functions": [plan, ...]} and
// one drawing per function, one below the other.
std::string FormatPlansJson(const std::vector<PlanReport>& reports);
std::string FormatPlansSvg(const std::vector<PlanReport>& reports);

}  // namespace hexir::planner

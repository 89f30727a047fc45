// hexir-plan: solves a static allocation problem in the MiniMalloc CSV format.
//   hexir-plan --input problem.csv [--capacity BYTES] [--time-limit SECONDS] [--output solution.csv]
// Prints the arena size, the lower bound and the time taken; exits 1 when the problem does not
// fit the capacity (or cannot be read).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/file_mapping.h"
#include "planner/csv.h"
#include "planner/solver.h"
#include "planner/verifier.h"
#include "base/cli_args.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "hexir-plan: error: %s\n", message.c_str());
  return 1;
}

constexpr const char* kUsage =
    "usage: hexir-plan --input problem.csv [--capacity BYTES] [--time-limit SECONDS]\n"
    "                  [--output solution.csv] [--best-fit-only] [--threads N]\n"
    "--threads N runs a parallel portfolio of search orders (faster; results may vary by run).\n";

}  // namespace

int main(int argc, char** argv) {
  std::string input, output;
  uint64_t capacity = 0;
  hexir::planner::SolveOptions options;
  options.time_limit_seconds = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("hexir-plan %s\n", HEXIR_VERSION);
      return 0;
    } else if (arg == "--input" && has_value) {
      input = argv[++i];
    } else if (arg == "--output" && has_value) {
      output = argv[++i];
    } else if (arg == "--capacity" && has_value) {
      int64_t v = 0;
      if (!hexir::cli::ParseInteger(argv[++i], 1, INT64_MAX, &v))
        return Fail(std::string("bad --capacity '") + argv[i] + "': a number of bytes from 1 to 2^63 - 1");
      capacity = static_cast<uint64_t>(v);
    } else if (arg == "--time-limit" && has_value) {
      if (!hexir::cli::ParseSeconds(argv[++i], 86400, &options.time_limit_seconds))
        return Fail(std::string("bad --time-limit '") + argv[i] + "': seconds from 0 to 86400");
    } else if (arg == "--threads" && has_value) {
      int64_t v = 0;
      if (!hexir::cli::ParseInteger(argv[++i], 1, 4, &v)) return Fail("--threads must be 1 to 4");
      options.search_threads = static_cast<int>(v);
    } else if (arg == "--best-fit-only") {
      options.exact_search = false;
    } else {
      return Fail("unexpected argument '" + arg + "'\n" + kUsage);
    }
  }
  if (input.empty()) return Fail(std::string("no --input given\n") + kUsage);
  auto text = hexir::ReadFileToString(input);
  if (!text.ok()) return Fail(text.status().message());
  auto problem = hexir::planner::ParseMiniMallocCsv(*text);
  if (!problem.ok()) return Fail("'" + input + "': " + problem.status().message());
  if (capacity != 0) problem->capacities = {capacity};

  auto solution = hexir::planner::Solve(*problem, options);
  if (!solution.ok()) return Fail(solution.status().message());
  hexir::Status verified = hexir::planner::Verify(*problem, solution->plan);
  if (!verified.ok()) return Fail("internal error, the plan does not verify: " + verified.message());
  const auto& report = solution->spaces.empty() ? hexir::planner::SpaceReport() : solution->spaces[0];
  std::printf("buffers: %zu\narena: %llu bytes\nlower bound: %llu bytes\nbest-fit: %llu bytes\n"
              "method: %s%s\nquality: %s\ntime: %.3f s\n",
              problem->buffers.size(), static_cast<unsigned long long>(report.arena_bytes),
              static_cast<unsigned long long>(report.lower_bound_bytes),
              static_cast<unsigned long long>(report.best_fit_bytes), report.method.c_str(),
              report.optimal ? " (optimal)" : "", report.Quality().c_str(), solution->seconds);
  if (!output.empty()) {
    std::string csv = hexir::planner::FormatSolutionCsv(*problem, solution->plan);
    hexir::Status written = hexir::WriteFileAtomically(output, csv.data(), csv.size());
    if (!written.ok()) return Fail(written.message());
  }
  return 0;
}

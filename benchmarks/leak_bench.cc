// Memory growth under repeated compile and load (not a test):
//
//   leak_bench [GRAPH.mlir] [--compiles N] [--cycles M] [--smoke]
//
// 1. Compiles GRAPH (default examples/mlp.mlir) N times (200) in one process after a warm-up
//    and prints the resident-set growth per compilation in KiB, measured after malloc_trim.
// 2. Loads the executable, creates and runs a session, destroys both, M times (1,000), and
//    prints the growth per cycle. The baseline is the RSS after the warm-up of each part.
// --smoke (CI): 3 compilations and 20 cycles after short warm-ups; seconds, no figures checked.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "Driver/Compile.h"
#include "base/file_mapping.h"
#include "hexir/hexir.h"
#include "llvm/Support/raw_ostream.h"

static double RssKiB() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024.0);
}

int main(int argc, char** argv) {
  std::string graph = HEXIR_DEFAULT_GRAPH;
  int compiles = 200, cycles = 1000, compile_warmup = 10, cycle_warmup = 50;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      compiles = 3, cycles = 20, compile_warmup = 1, cycle_warmup = 5;
      continue;
    }
    if (std::strcmp(argv[i], "--compiles") == 0 && i + 1 < argc) compiles = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) cycles = std::atoi(argv[++i]);
    else graph = argv[i];
  }
  hexir::compiler::CompileOptions options;
  options.inputPath = graph;
  options.outputPath = "/tmp/hexir_leak_bench_" + std::to_string(getpid()) + ".hxb";
  std::vector<uint8_t> bytes;
  for (int i = 0; i < compile_warmup; ++i)
    if (!hexir::compiler::compileToBytes(options, bytes, llvm::errs())) return 1;
  double before = RssKiB();
  for (int i = 0; i < compiles; ++i)
    if (!hexir::compiler::compileToBytes(options, bytes, llvm::errs())) return 1;
  double after = RssKiB();
  std::printf("== %d compilations of %s\nRSS %.0f KiB -> %.0f KiB: %.2f KiB per compilation\n", compiles,
              graph.c_str(), before, after, (after - before) / compiles);

  if (!hexir::WriteFileAtomically(options.outputPath, bytes.data(), bytes.size()).ok()) return 1;
  hexir::RuntimeOptions runtime_options;
  runtime_options.threads = 1;
  auto runtime = hexir::Runtime::Create(runtime_options);
  if (!runtime.ok()) return 1;
  auto cycle = [&]() {
    auto module = hexir::Module::Load(**runtime, options.outputPath);
    if (!module.ok()) return false;
    auto session = hexir::Session::Create(*module);
    if (!session.ok()) return false;
    std::vector<std::vector<float>> in, out;
    std::vector<hexir::TensorView> iv;
    std::vector<hexir::MutableTensorView> ov;
    for (const auto& t : (*session)->inputs()) in.emplace_back(t.byte_size / 4, 0.5f);
    for (const auto& t : (*session)->outputs()) out.emplace_back(t.byte_size / 4);
    for (size_t i = 0; i < in.size(); ++i)
      iv.push_back({in[i].data(), hexir::ElementType::kF32, hexir::Span<const int64_t>((*session)->inputs()[i].shape)});
    for (size_t i = 0; i < out.size(); ++i)
      ov.push_back({out[i].data(), hexir::ElementType::kF32, hexir::Span<const int64_t>((*session)->outputs()[i].shape)});
    return (*session)->Run(hexir::Span<const hexir::TensorView>(iv), hexir::Span<const hexir::MutableTensorView>(ov)).ok();
  };
  for (int i = 0; i < cycle_warmup; ++i)
    if (!cycle()) return 1;
  before = RssKiB();
  for (int i = 0; i < cycles; ++i)
    if (!cycle()) return 1;
  after = RssKiB();
  std::printf("\n== %d cycles of load, session, run, destroy\nRSS %.0f KiB -> %.0f KiB: %.3f KiB per cycle; "
              "device buffers outstanding: %llu\n",
              cycles, before, after, (after - before) / cycles,
              static_cast<unsigned long long>((*runtime)->live_buffers()));
  std::remove(options.outputPath.c_str());
  return 0;
}

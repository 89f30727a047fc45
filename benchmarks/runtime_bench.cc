// Runtime benchmark (not a test): prints figures against baselines measured in the same run.
//
//   runtime_bench [--constants-mib N] [--smoke]
//
// 1. Execute-phase overhead per dispatch: a function of 1,000 DISPATCH commands of a tiny
//    kernel (8-float add), run through Session::Run, against calling the same kernel entry
//    1,000 times directly in a loop. Single thread.
// 2. Load time of a module with N MiB (default 128) of constants: Module::Load, against
//    reading the file once (what a loader that touches the weights would at least pay), and
//    Module::Load with weight verification.
// --smoke (CI): 100 dispatches, 1 MiB of constants, a few repetitions; seconds, no figures checked.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/file_mapping.h"
#include "hal/executable.h"
#include "hexir/hexir.h"
#include "serializer/writer.h"

using Clock = std::chrono::steady_clock;
namespace ser = hexir::serializer;

static double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static std::vector<uint8_t> KernelLibrary() {
  auto elf = hexir::ReadFileToString(HEXIR_TEST_KERNELS_PATH);
  if (!elf.ok()) {
    std::fprintf(stderr, "%s\n", elf.status().ToString().c_str());
    std::exit(1);
  }
  return std::vector<uint8_t>(elf->begin(), elf->end());
}

// `dispatches` >= 2: the first reads the input into the arena, the last writes the output from
// it, so the arena's one 32-byte slot is used (the reader refuses an arena larger than its slots).
static ser::ExecutableSpec Spec(int dispatches, uint64_t constant_bytes) {
  ser::ExecutableSpec spec;
  ser::KernelLibrary lib;
  lib.code = KernelLibrary();
  lib.entries = {{"test_add8", 3, 1, 0, {32, 32, 32}}};
  spec.libraries.push_back(lib);
  spec.constants.assign(std::max<uint64_t>(constant_bytes, 32), 0);
  for (uint64_t i = 0; i < spec.constants.size(); i += 4096) spec.constants[i] = static_cast<uint8_t>(i >> 12);
  ser::Function fn;
  fn.name = "main";
  fn.inputs = {{"x", ser::ElementType::F32, {8}}};
  fn.outputs = {{"y", ser::ElementType::F32, {8}}};
  fn.arenas = {{0, 64, 64}};  // one 64-byte arena in memory space 0 (host)
  fn.commands.push_back(ser::AllocCommand{0});
  for (int i = 0; i < dispatches; ++i) {
    ser::DispatchCommand d;
    // arena[0..32) = (i == 0 ? x : arena[0..32)) + constants[0..32); the last writes y.
    ser::Slot in = i == 0 ? ser::Slot{ser::SlotKind::Input, 0, 0, 32} : ser::Slot{ser::SlotKind::Arena, 0, 0, 32};
    ser::Slot out = i + 1 == dispatches ? ser::Slot{ser::SlotKind::Output, 0, 0, 32}
                                        : ser::Slot{ser::SlotKind::Arena, 0, 0, 32};
    d.bindings = {in, {ser::SlotKind::Constant, 0, 0, 32}, out};
    d.num_inputs = 2;
    d.aliases = {i == 0 || i + 1 == dispatches ? -1 : 0};
    fn.commands.push_back(d);
  }
  spec.functions.push_back(fn);
  return spec;
}

static std::string Write(const ser::ExecutableSpec& spec, const char* tag) {
  std::vector<uint8_t> bytes = ser::WriteExecutable(spec);
  std::string path = "/tmp/hexir_runtime_bench_" + std::to_string(::getpid()) + "_" + tag + ".hxb";
  if (!hexir::WriteFileAtomically(path, bytes.data(), bytes.size()).ok()) std::exit(1);
  return path;
}

int main(int argc, char** argv) {
  uint64_t constants_mib = 128;
  bool smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--constants-mib") == 0 && i + 1 < argc) {
      constants_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
      constants_mib = 1;
    } else {
      std::fprintf(stderr, "usage: runtime_bench [--constants-mib N] [--smoke]\n");
      return 2;
    }
  }
  const int kReps = smoke ? 10 : 200, kLoadReps = smoke ? 2 : 7;

  hexir::RuntimeOptions options;
  options.threads = 1;
  auto runtime = hexir::Runtime::Create(options);
  if (!runtime.ok()) return 1;

  // 1. Dispatch overhead.
  const int kDispatches = smoke ? 100 : 1000;
  std::string path = Write(Spec(kDispatches, 32), "dispatch");
  auto module = hexir::Module::Load(**runtime, path);
  if (!module.ok()) return std::fprintf(stderr, "%s\n", module.status().ToString().c_str()), 1;
  auto session = hexir::Session::Create(*module);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  alignas(64) float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
  int64_t shape[] = {8};
  hexir::TensorView in{x, hexir::ElementType::kF32, {shape, 1}};
  hexir::MutableTensorView out{y, hexir::ElementType::kF32, {shape, 1}};
  std::vector<double> interpreted;
  for (int rep = 0; rep < kReps; ++rep) {
    Clock::time_point t0 = Clock::now();
    hexir::Status status = (*session)->Run({&in, 1}, {&out, 1});
    if (!status.ok()) return std::fprintf(stderr, "%s\n", status.ToString().c_str()), 1;
    interpreted.push_back(Ms(t0, Clock::now()));
  }
  // Baseline: the same kernel entry called directly, 1,000 times, same memory.
  void* handle = dlopen(HEXIR_TEST_KERNELS_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return std::fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
  auto add = reinterpret_cast<hexir::hal::HostKernelFn>(dlsym(handle, "test_add8"));
  if (!add) return std::fprintf(stderr, "dlsym test_add8: %s\n", dlerror()), 1;
  alignas(64) float arena[8] = {}, consts[8] = {};
  void* first[3] = {x, consts, arena};
  void* middle[3] = {arena, consts, arena};
  void* last[3] = {arena, consts, y};
  std::vector<double> direct;
  for (int rep = 0; rep < kReps; ++rep) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kDispatches; ++i) add(i == 0 ? first : i + 1 == kDispatches ? last : middle, 0, 1);
    direct.push_back(Ms(t0, Clock::now()));
  }
  double per_interp = Median(interpreted) * 1e6 / kDispatches, per_direct = Median(direct) * 1e6 / kDispatches;
  std::printf("== execute phase: %d tiny dispatches, single thread\n", kDispatches);
  std::printf("Session::Run: %.1f ns per dispatch; direct calls: %.1f ns per call; overhead %.1f ns per dispatch "
              "(%.2fx the direct call)\n",
              per_interp, per_direct, per_interp - per_direct, per_interp / per_direct);
  dlclose(handle);
  std::remove(path.c_str());

  // 2. Load time with large constants.
  path = Write(Spec(2, constants_mib << 20), "load");
  std::vector<double> load, load_verified, read_file;
  for (int rep = 0; rep < kLoadReps; ++rep) {
    Clock::time_point t0 = Clock::now();
    auto m = hexir::Module::Load(**runtime, path);
    Clock::time_point t1 = Clock::now();
    if (!m.ok()) return std::fprintf(stderr, "%s\n", m.status().ToString().c_str()), 1;
    load.push_back(Ms(t0, t1));
    hexir::ModuleOptions verify;
    verify.verify_weights = true;
    t0 = Clock::now();
    auto mv = hexir::Module::Load(**runtime, path, verify);
    load_verified.push_back(Ms(t0, Clock::now()));
    if (!mv.ok()) return std::fprintf(stderr, "%s\n", mv.status().ToString().c_str()), 1;
    t0 = Clock::now();
    int fd = ::open(path.c_str(), O_RDONLY);
    std::vector<char> buf(1 << 20);
    while (::read(fd, buf.data(), buf.size()) > 0) {
    }
    ::close(fd);
    read_file.push_back(Ms(t0, Clock::now()));
  }
  std::printf("\n== load phase: %llu MiB of constants (page cache warm)\n", static_cast<unsigned long long>(constants_mib));
  std::printf("Module::Load: %.3f ms; reading the file once: %.3f ms (load is %.4fx of that); "
              "Module::Load with weight checksums: %.3f ms\n",
              Median(load), Median(read_file), Median(load) / Median(read_file), Median(load_verified));
  std::remove(path.c_str());
  return 0;
}

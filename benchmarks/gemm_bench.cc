// f32 GEMM benchmark (not a test): Hexir's compiled matmul kernels against OpenBLAS sgemm and
// the machine's FMA peak, all measured in this run, single-threaded by default.
//
//   gemm_bench [--min-time SECONDS] [--threads N] [--smoke] MATMUL.hxb...
//
// Each executable (benchmarks/gemm.py writes and compiles them) computes C[M,N] = A[M,K] B[K,N]
// from inputs A and B; an executable with A as its only input holds B as a constant and has
// the same values beside it as MATMUL.b.npy. For each one: the module is loaded and run through
// the public runtime API (hexir/hexir.h) on random inputs, its C is checked against OpenBLAS's
// (max |hexir - openblas| / max |openblas|), then Session::Run and cblas_sgemm are each timed
// (median of runs over at least --min-time seconds, default 1). The FMA peak comes from a probe:
// independent chains of FMAs on registers, AVX-512 or AVX2, whichever is faster here. Beside it,
// an L1-resident register tile of that width (a matmul's inner loop with its loads, all data in
// L1): the most a kernel that loads its operands reaches on this core. With AVX2 also two int8
// tiles: Hexir's exact pairs and ONNX Runtime's saturating u8 x s8 form (TilePairsAvx2).
// Prints GFLOP/s, the ratios Hexir/OpenBLAS, Hexir/peak and Hexir/tile; exits 1 if a module fails to load
// or run, or gives a wrong result. --smoke: short timings (CI).
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels by CPU model when it is loaded,
// and falls back to old SSE3 kernels ("Prescott") on a model it does not know (0.3.21 on an
// Emerald Rapids guest: 32 instead of 150 GFLOP/s at 512^3). When that happens on a CPU with
// AVX2 and FMA and OPENBLAS_CORETYPE is not set, gemm_bench sets it (SkylakeX with AVX-512,
// else Haswell) and runs itself again, and says so in its output.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include <cblas.h>

#include "hexir/hexir.h"
#include "tools/npy.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTolerance = 1e-4;  // max |hexir - openblas| / max |openblas|

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Median seconds per call of `fn`, called at least 3 times and for at least `min_time` seconds
// (the correctness check before has warmed both up).
template <typename Fn>
double TimeMedian(Fn&& fn, double min_time) {
  std::vector<double> secs;
  Clock::time_point start = Clock::now();
  while (secs.size() < 3 || Seconds(start, Clock::now()) < min_time) {
    Clock::time_point t0 = Clock::now();
    fn();
    secs.push_back(Seconds(t0, Clock::now()));
  }
  std::sort(secs.begin(), secs.end());
  return secs[secs.size() / 2];
}

// ---- FMA peak probe: 12 independent accumulator chains (latency 4 x 2 ports needs 8) -------

#define HEXIR_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
constexpr int kChains = 12;
volatile float g_sink;

__attribute__((target("avx512f,fma"))) double ProbeAvx512(int64_t iters) {
  __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
#define HEXIR_DECL(i) __m512 c##i = _mm512_set1_ps(1.0f + (i) * 1e-3f);
#define HEXIR_FMA(i) c##i = _mm512_fmadd_ps(c##i, a, b);
#define HEXIR_SUM(i) s = _mm512_add_ps(s, c##i);
  HEXIR_CHAINS(HEXIR_DECL)
  Clock::time_point t0 = Clock::now();
  // The chains start after t0 (the compiler may not compute them earlier) and are summed into
  // a volatile before t1 (nor later): the loop is pure, and without both it was moved out of
  // the timed span (the probe printed 8e9 GFLOP/s).
  asm volatile("" : "+v"(a), "+v"(b));
  for (int64_t n = 0; n < iters; ++n) {
    HEXIR_CHAINS(HEXIR_FMA)
  }
  __m512 s = _mm512_setzero_ps();
  HEXIR_CHAINS(HEXIR_SUM)
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  g_sink = lanes[0] + lanes[15];
  double secs = Seconds(t0, Clock::now());
  return static_cast<double>(iters) * kChains * 16 * 2 / secs * 1e-9;
#undef HEXIR_DECL
#undef HEXIR_FMA
#undef HEXIR_SUM
}

__attribute__((target("avx2,fma"))) double ProbeAvx2(int64_t iters) {
  __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f);
#define HEXIR_DECL(i) __m256 c##i = _mm256_set1_ps(1.0f + (i) * 1e-3f);
#define HEXIR_FMA(i) c##i = _mm256_fmadd_ps(c##i, a, b);
#define HEXIR_SUM(i) s = _mm256_add_ps(s, c##i);
  HEXIR_CHAINS(HEXIR_DECL)
  Clock::time_point t0 = Clock::now();
  // The chains start after t0 (the compiler may not compute them earlier) and are summed into
  // a volatile before t1 (nor later): the loop is pure, and without both it was moved out of
  // the timed span (the probe printed 8e9 GFLOP/s).
  asm volatile("" : "+v"(a), "+v"(b));
  for (int64_t n = 0; n < iters; ++n) {
    HEXIR_CHAINS(HEXIR_FMA)
  }
  __m256 s = _mm256_setzero_ps();
  HEXIR_CHAINS(HEXIR_SUM)
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  g_sink = lanes[0] + lanes[7];
  double secs = Seconds(t0, Clock::now());
  return static_cast<double>(iters) * kChains * 8 * 2 / secs * 1e-9;
#undef HEXIR_DECL
#undef HEXIR_FMA
#undef HEXIR_SUM
}

// ---- L1-resident register tile: the most a matmul kernel that loads its operands reaches -----
// A register tile of rows x two vectors of accumulators (14 x 32 with AVX-512: 28 zmm; 6 x 16
// with AVX2: 12 ymm) over 256 reduction steps of A and B held in L1, as a matmul's inner loop
// runs it: per step two vector loads of B, a broadcast of each row of A and the FMAs. The gap
// between this and the FMA probe is the cost of the loads alone, on this core; no data comes
// from L2 or memory.
constexpr int kTileSteps = 256;
alignas(64) float g_tileA[14 * kTileSteps], g_tileB[kTileSteps * 32];

__attribute__((target("avx512f,fma"))) double TileAvx512(int64_t iters) {
  constexpr int kRows = 14;
  __m512 c0[kRows], c1[kRows];
  for (int r = 0; r < kRows; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  Clock::time_point t0 = Clock::now();
  for (int64_t n = 0; n < iters; ++n) {
    const float* a = g_tileA;
    const float* b = g_tileB;
    for (int k = 0; k < kTileSteps; ++k, a += kRows, b += 32) {
      __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
      for (int r = 0; r < kRows; ++r) {
        __m512 x = _mm512_set1_ps(a[r]);
        c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
      }
    }
    asm volatile("" ::: "memory");  // A and B are read again in every pass
  }
  double secs = Seconds(t0, Clock::now());
  __m512 s = _mm512_setzero_ps();
  for (int r = 0; r < kRows; ++r) s = _mm512_add_ps(s, _mm512_add_ps(c0[r], c1[r]));
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  g_sink = lanes[0] + lanes[15];
  return static_cast<double>(iters) * kRows * 32 * 2 * kTileSteps / secs * 1e-9;
}

__attribute__((target("avx2,fma"))) double TileAvx2(int64_t iters) {
  constexpr int kRows = 6;
  __m256 c0[kRows], c1[kRows];
  for (int r = 0; r < kRows; ++r) c0[r] = c1[r] = _mm256_setzero_ps();
  Clock::time_point t0 = Clock::now();
  for (int64_t n = 0; n < iters; ++n) {
    const float* a = g_tileA;
    const float* b = g_tileB;
    for (int k = 0; k < kTileSteps; ++k, a += kRows, b += 16) {
      __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        __m256 x = _mm256_set1_ps(a[r]);
        c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
      }
    }
    asm volatile("" ::: "memory");
  }
  double secs = Seconds(t0, Clock::now());
  __m256 s = _mm256_setzero_ps();
  for (int r = 0; r < kRows; ++r) s = _mm256_add_ps(s, _mm256_add_ps(c0[r], c1[r]));
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  g_sink = lanes[0] + lanes[7];
  return static_cast<double>(iters) * kRows * 16 * 2 * kTileSteps / secs * 1e-9;
}

// ---- int8 register tiles (AVX2): what an int8 kernel's inner loop reaches without VNNI ------
// The same 6 x 16 tile of int32 accumulators over L1-resident int8 operands, in multiply-adds
// (two integer operations each, so comparable with the f32 tile's GFLOP/s):
// - pairs, Hexir's kernel (Target/Host/DotProducts.cpp): per step of two reduction indices, two
//   16-byte loads of B sign-extended to int16, per row the pair of A broadcast as one int16 and
//   zero-extended, then vpmaddwd and an add per vector: exact;
// - u8 x s8 with vpmaddubsw, as ONNX Runtime's AVX2 kernels: per step of four, two 32-byte
//   loads of B, per row four bytes of A broadcast, then vpmaddubsw, vpmaddwd by ones and an add
//   per vector: twice the multiply-adds per instruction, but vpmaddubsw's int16 sums of two
//   products saturate (255 x 127 x 2 > 32767), so its results are not exact.
alignas(64) uint8_t g_int8A[6 * 4 * kTileSteps], g_int8B[kTileSteps * 16 * 4];
volatile int32_t g_int8Sink;

__attribute__((target("avx2"))) static void SinkInt32(const __m256i* c, int n) {
  __m256i s = _mm256_setzero_si256();
  for (int i = 0; i < n; ++i) s = _mm256_add_epi32(s, c[i]);
  g_int8Sink = _mm256_extract_epi32(s, 0) + _mm256_extract_epi32(s, 7);
}

__attribute__((target("avx2"))) double TilePairsAvx2(int64_t iters) {
  constexpr int kRows = 6;
  __m256i c[2 * kRows];
  for (__m256i& v : c) v = _mm256_setzero_si256();
  Clock::time_point t0 = Clock::now();
  for (int64_t n = 0; n < iters; ++n) {
    const uint8_t* a = g_int8A;
    const uint8_t* b = g_int8B;
    for (int k = 0; k < kTileSteps; ++k, a += 2 * kRows, b += 32) {
      __m256i b0 = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b)));
      __m256i b1 = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b + 16)));
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        int16_t pair;
        std::memcpy(&pair, a + 2 * r, 2);
        __m256i x = _mm256_cvtepu8_epi16(_mm_set1_epi16(pair));
        c[2 * r] = _mm256_add_epi32(c[2 * r], _mm256_madd_epi16(x, b0));
        c[2 * r + 1] = _mm256_add_epi32(c[2 * r + 1], _mm256_madd_epi16(x, b1));
      }
    }
    asm volatile("" ::: "memory");
  }
  double secs = Seconds(t0, Clock::now());
  SinkInt32(c, 2 * kRows);
  return static_cast<double>(iters) * kRows * 16 * 2 * 2 * kTileSteps / secs * 1e-9;
}

__attribute__((target("avx2"))) double TileU8S8Avx2(int64_t iters) {
  constexpr int kRows = 6;
  __m256i c[2 * kRows];
  for (__m256i& v : c) v = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  Clock::time_point t0 = Clock::now();
  for (int64_t n = 0; n < iters; ++n) {
    const uint8_t* a = g_int8A;
    const uint8_t* b = g_int8B;
    for (int k = 0; k < kTileSteps / 2; ++k, a += 4 * kRows, b += 64) {
      __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b));
      __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 32));
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        int32_t quad;
        std::memcpy(&quad, a + 4 * r, 4);
        __m256i x = _mm256_set1_epi32(quad);
        c[2 * r] = _mm256_add_epi32(c[2 * r], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b0), ones));
        c[2 * r + 1] = _mm256_add_epi32(c[2 * r + 1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b1), ones));
      }
    }
    asm volatile("" ::: "memory");
  }
  double secs = Seconds(t0, Clock::now());
  SinkInt32(c, 2 * kRows);
  // (Half the steps, each of four reduction indices: the same multiply-adds as the pairs.)
  return static_cast<double>(iters) * kRows * 16 * 4 * 2 * (kTileSteps / 2) / secs * 1e-9;
}

// Best of a few probes of about `seconds` each; the iteration count is calibrated first
// (`flops` per iteration).
double Best(double (*probe)(int64_t), double seconds, double flops) {
  int64_t iters = 64;
  double gflops = probe(iters);  // warm-up (and frequency ramp)
  iters = std::max<int64_t>(iters, static_cast<int64_t>(seconds * gflops * 1e9 / flops));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) best = std::max(best, probe(iters));
  return best;
}

// ---- one matmul executable ------------------------------------------------------------------

struct Result {
  std::string label;
  int64_t m = 0, n = 0, k = 0;
  double hexir_gflops = 0, blas_gflops = 0, error = 0;
  bool ok = false;
  std::string failure;
};

uint64_t g_seed = 0x9E3779B97F4A7C15ull;
float Random() {  // uniform in [-1, 1), xorshift64
  g_seed ^= g_seed << 13, g_seed ^= g_seed >> 7, g_seed ^= g_seed << 17;
  return static_cast<float>((g_seed >> 40) * (1.0 / (1 << 23)) - 1.0);
}

std::string Basename(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".hxb") == 0) name.resize(name.size() - 4);
  return name;
}

bool IsMatrix(const hexir::TensorInfo& t) {
  return t.element_type == hexir::ElementType::kF32 && t.shape.size() == 2;
}

Result Bench(const hexir::Runtime& runtime, const std::string& path, double min_time) {
  Result r;
  r.label = Basename(path);
  auto module = hexir::Module::Load(runtime, path);
  if (!module.ok()) return r.failure = module.status().ToString(), r;
  auto session = hexir::Session::Create(*module);
  if (!session.ok()) return r.failure = session.status().ToString(), r;
  const auto& ins = (*session)->inputs();
  const auto& outs = (*session)->outputs();
  if (ins.empty() || ins.size() > 2 || outs.size() != 1 || !IsMatrix(ins[0]) || !IsMatrix(outs[0]) ||
      (ins.size() == 2 && !IsMatrix(ins[1])))
    return r.failure = "not a matmul: expected inputs A[M,K] (and B[K,N]) and one output C[M,N], all f32", r;
  r.m = ins[0].shape[0], r.k = ins[0].shape[1], r.n = outs[0].shape[1];
  if (outs[0].shape[0] != r.m || (ins.size() == 2 && (ins[1].shape[0] != r.k || ins[1].shape[1] != r.n)))
    return r.failure = "the shapes of A, B and C do not make a matmul", r;
  const size_t m = r.m, n = r.n, k = r.k;
  std::vector<float> a(m * k), b(k * n), c(m * n), ref(m * n);
  for (float& v : a) v = Random();
  if (ins.size() == 2) {
    for (float& v : b) v = Random();
  } else {
    std::string npy = path.substr(0, path.size() - (path.size() > 4 ? 4 : 0)) + ".b.npy";
    auto array = hexir::npy::Read(npy);
    if (!array.ok()) return r.failure = "B is a constant, and its values: " + array.status().ToString(), r;
    if (array->element_type != hexir::ElementType::kF32 || array->element_count() != k * n)
      return r.failure = npy + " is not a f32 K x N array", r;
    std::memcpy(b.data(), array->data(), b.size() * sizeof(float));
  }
  hexir::TensorView views[2] = {{a.data(), hexir::ElementType::kF32, hexir::Span<const int64_t>(ins[0].shape)},
                                {b.data(), hexir::ElementType::kF32, {}}};
  if (ins.size() == 2) views[1].shape = hexir::Span<const int64_t>(ins[1].shape);
  hexir::MutableTensorView out{c.data(), hexir::ElementType::kF32, hexir::Span<const int64_t>(outs[0].shape)};
  hexir::Span<const hexir::TensorView> in_span(views, ins.size());
  hexir::Span<const hexir::MutableTensorView> out_span(&out, 1);

  hexir::Status status = (*session)->Run(in_span, out_span);
  if (!status.ok()) return r.failure = status.ToString(), r;
  auto sgemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r.m, r.n, r.k, 1.0f, a.data(), r.k, b.data(), r.n, 0.0f,
                ref.data(), r.n);
  };
  sgemm();
  double max_ref = 0, max_diff = 0;
  bool finite = true;
  for (size_t i = 0; i < c.size(); ++i) {
    finite &= std::isfinite(c[i]);
    max_ref = std::max(max_ref, static_cast<double>(std::fabs(ref[i])));
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(c[i] - ref[i])));
  }
  r.error = finite ? max_diff / std::max(max_ref, 1e-30) : INFINITY;
  if (!(r.error <= kTolerance)) {
    char text[160];
    std::snprintf(text, sizeof(text), "WRONG RESULT: max |hexir - openblas| / max |openblas| = %.3g", r.error);
    return r.failure = text, r;
  }

  const double flop = 2.0 * r.m * r.n * r.k;
  bool run_failed = false;
  double hexir_secs = TimeMedian([&] { run_failed |= !(*session)->Run(in_span, out_span).ok(); }, min_time);
  if (run_failed) return r.failure = "Session::Run failed while timing", r;
  double blas_secs = TimeMedian(sgemm, min_time);
  r.hexir_gflops = flop / hexir_secs * 1e-9;
  r.blas_gflops = flop / blas_secs * 1e-9;
  r.ok = true;
  return r;
}

// The OPENBLAS_CORETYPE to run with when OpenBLAS chose kernels older than AVX2 on a CPU with
// AVX2 and FMA; null when its choice is fine or the user chose.
const char* BetterCoreType() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return nullptr;
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  const char* core = openblas_get_corename();
  static const char* const kModern[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
  std::string name = core ? core : "";
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* good : kModern)
    if (name == good) return nullptr;
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512cd");
  return avx512 ? "SkylakeX" : "Haswell";
}

}  // namespace

int main(int argc, char** argv) {
  __builtin_cpu_init();
  if (const char* core = BetterCoreType()) {
    std::string chosen = openblas_get_corename() ? openblas_get_corename() : "?";
    std::fprintf(stderr, "gemm_bench: OpenBLAS chose '%s' kernels for this CPU; running again with "
                         "OPENBLAS_CORETYPE=%s\n", chosen.c_str(), core);
    setenv("OPENBLAS_CORETYPE", core, 1);
    setenv("HEXIR_GEMM_BENCH_OPENBLAS_GUESSED", chosen.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "gemm_bench: cannot run itself again (%s); OpenBLAS stays on '%s'\n",
                 std::strerror(errno), chosen.c_str());
  }
  double min_time = 1.0, probe_time = 0.2;
  int threads = 1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
      min_time = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--smoke") == 0) {
      min_time = 0.02, probe_time = 0.01;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: gemm_bench [--min-time SECONDS] [--threads N] [--smoke] MATMUL.hxb...\n");
      return 2;
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "gemm_bench: no executable given (benchmarks/gemm.py writes them)\n");
    return 2;
  }

  openblas_set_num_threads(threads);
  hexir::RuntimeOptions options;
  options.threads = threads;
  auto runtime = hexir::Runtime::Create(options);
  if (!runtime.ok()) return std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str()), 1;

  double peak = 0, tile = 0, pairs = 0, u8s8 = 0;
  const char* isa = "none (no AVX2+FMA: no peak)";
  const char* tileShape = "";
  for (size_t i = 0; i < sizeof(g_tileA) / sizeof(float); ++i) g_tileA[i] = 1e-3f * static_cast<float>(i % 7);
  for (size_t i = 0; i < sizeof(g_tileB) / sizeof(float); ++i) g_tileB[i] = 1e-3f * static_cast<float>(i % 5);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak = Best(ProbeAvx2, probe_time, kChains * 16);
    tile = Best(TileAvx2, probe_time, 6.0 * 16 * 2 * kTileSteps);
    isa = "AVX2 (ymm)";
    tileShape = "6x16";
    for (size_t i = 0; i < sizeof(g_int8A); ++i) g_int8A[i] = static_cast<uint8_t>(i * 37 % 251);
    for (size_t i = 0; i < sizeof(g_int8B); ++i) g_int8B[i] = static_cast<uint8_t>(i * 53 % 249);
    pairs = Best(TilePairsAvx2, probe_time, 6.0 * 16 * 2 * 2 * kTileSteps);
    u8s8 = Best(TileU8S8Avx2, probe_time, 6.0 * 16 * 2 * 2 * kTileSteps);
  }
  if (__builtin_cpu_supports("avx512f")) {
    double zmm = Best(ProbeAvx512, probe_time, kChains * 32);
    if (zmm > peak) {
      peak = zmm, isa = "AVX-512 (zmm)";
      tile = Best(TileAvx512, probe_time, 14.0 * 32 * 2 * kTileSteps);
      tileShape = "14x32";
    }
  }
  const char* config = openblas_get_config();
  std::printf("== f32 GEMM, %d thread(s): Hexir (Session::Run) vs OpenBLAS sgemm (%s)\n", threads,
              config ? config : "?");
  if (const char* was = std::getenv("HEXIR_GEMM_BENCH_OPENBLAS_GUESSED"))
    std::printf("note: OpenBLAS chose '%s' kernels for this CPU model; OPENBLAS_CORETYPE=%s set by gemm_bench\n", was,
                std::getenv("OPENBLAS_CORETYPE"));
  std::printf("FMA peak, one core: %.1f GFLOP/s (%s probe)%s\n", peak, isa,
              threads > 1 ? "; the peak and tile columns are per core" : "");
  if (tile > 0)
    std::printf("L1-resident %s register tile (its loads and FMAs, data in L1): %.1f GFLOP/s, %.3f of the peak\n",
                tileShape, tile, tile / peak);
  if (pairs > 0)
    std::printf("int8 L1-resident 6x16 tiles (AVX2, G int ops/s, 2 per multiply-add): exact vpmaddwd pairs %.1f (%.2f "
                "of the f32 tile), saturating u8 x s8 vpmaddubsw %.1f (%.2f)\n",
                pairs, pairs / tile, u8s8, u8s8 / tile);
  std::printf("%-28s %14s %14s %8s %8s %8s %8s %9s\n", "matmul (MxNxK)", "hexir GFLOP/s", "openblas", "hx/blas",
              "hx/peak", "hx/tile", "bl/peak", "rel err");
  int failures = 0;
  double log_sum = 0;
  int counted = 0;
  for (const std::string& path : paths) {
    Result r = Bench(**runtime, path, min_time);
    if (!r.ok) {
      ++failures;
      std::printf("%-28s FAILED: %s\n", r.label.c_str(), r.failure.c_str());
      continue;
    }
    char shape[64];
    std::snprintf(shape, sizeof(shape), "%lldx%lldx%lld", static_cast<long long>(r.m), static_cast<long long>(r.n),
                  static_cast<long long>(r.k));
    std::string label = r.label.find(shape) == std::string::npos ? r.label + " " + shape : r.label;
    double ratio = r.hexir_gflops / r.blas_gflops;
    log_sum += std::log(ratio);
    ++counted;
    std::printf("%-28s %14.2f %14.2f %8.3f %8.3f %8.3f %8.3f %9.1e\n", label.c_str(), r.hexir_gflops, r.blas_gflops,
                ratio, peak > 0 ? r.hexir_gflops / peak : 0.0, tile > 0 ? r.hexir_gflops / tile : 0.0,
                peak > 0 ? r.blas_gflops / peak : 0.0, r.error);
    std::fflush(stdout);
  }
  if (counted) std::printf("geometric mean of hexir/openblas over %d shape(s): %.3f\n", counted, std::exp(log_sum / counted));
  if (failures) std::printf("FAILED: %d of %zu\n", failures, paths.size());
  return failures ? 1 : 0;
}

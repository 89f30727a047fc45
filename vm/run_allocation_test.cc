// Session::Run() must not allocate: this binary interposes malloc/calloc/realloc/free and
// operator new/delete, counts calls while a flag is set, and runs a session 1,000 times.
// (Its own main: the counting hooks must see every allocation of the process.)
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "hexir/hexir.h"
#include "vm/test_executable.h"

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

extern "C" void* malloc(size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) { __libc_free(p); }
void* operator new(size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  void* p = __libc_malloc(n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }

// `run_allocation_test MODEL.hxb`: its main function, on zero inputs, 20 runs after a warm-up
// (a compiled model: examples/generate's, whose one run is a whole decode loop).
// The module at `path`, or null (said on stderr).
std::shared_ptr<const hexir::Module> Load(const hexir::Runtime& runtime, const std::string& path) {
  auto module = hexir::Module::Load(runtime, path);
  if (module.ok()) return *module;
  std::fprintf(stderr, "%s\n", module.status().ToString().c_str());
  return nullptr;
}

int RunModel(const char* path) {
  auto runtime = hexir::Runtime::Create({});
  if (!runtime.ok()) return 2;
  auto module = Load(**runtime, path);
  if (!module) return 2;
  auto session = hexir::Session::Create(module);
  auto ins = module->inputs();
  auto outs = module->outputs();
  if (!session.ok() || !ins.ok() || !outs.ok()) return 2;
  std::vector<std::vector<unsigned char>> storage;
  std::vector<hexir::TensorView> in_views;
  std::vector<hexir::MutableTensorView> out_views;
  for (const hexir::TensorInfo& t : *ins) storage.emplace_back(t.byte_size);
  for (const hexir::TensorInfo& t : *outs) storage.emplace_back(t.byte_size);
  for (size_t i = 0; i < ins->size(); ++i)
    in_views.push_back({storage[i].data(), (*ins)[i].element_type, hexir::Span<const int64_t>((*ins)[i].shape)});
  for (size_t i = 0; i < outs->size(); ++i)
    out_views.push_back({storage[ins->size() + i].data(), (*outs)[i].element_type,
                         hexir::Span<const int64_t>((*outs)[i].shape)});
  hexir::Span<const hexir::TensorView> in_span(in_views);
  hexir::Span<const hexir::MutableTensorView> out_span(out_views);
  hexir::Status warm = (*session)->Run(in_span, out_span);
  if (!warm.ok()) {
    std::fprintf(stderr, "%s\n", warm.ToString().c_str());
    return 2;
  }
  counting = true;
  bool ok = true;
  for (int i = 0; i < 20; ++i) ok &= (*session)->Run(in_span, out_span).ok();
  counting = false;
  long n = allocations.load();
  std::printf("%ld heap allocations in 20 runs of %s%s\n", n, path, ok ? "" : " (a run FAILED)");
  return n == 0 && ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1) return RunModel(argv[1]);
  std::string path = hexir::testing::WriteTestExecutable(HEXIR_TEST_KERNELS_PATH, "alloc");
  auto runtime = hexir::Runtime::Create({});
  if (!runtime.ok()) return 2;
  auto module = Load(**runtime, path);
  if (!module) return 2;
  auto session = hexir::Session::Create(module);
  if (!session.ok()) return 2;
  alignas(64) float x[8] = {1, 2, 3, 4, -1, -2, -3, -4};
  float y[8], t[8];
  int64_t xs[] = {2, 4}, ts[] = {8};
  hexir::TensorView in{x, hexir::ElementType::kF32, hexir::Span<const int64_t>(xs, 2)};
  hexir::MutableTensorView outs[] = {{y, hexir::ElementType::kF32, hexir::Span<const int64_t>(xs, 2)},
                                     {t, hexir::ElementType::kF32, hexir::Span<const int64_t>(ts, 1)}};
  hexir::Span<const hexir::TensorView> ins(&in, 1);
  hexir::Span<const hexir::MutableTensorView> out_span(outs, 2);
  // Misaligned input: goes through the staging made at Create, still without allocating.
  alignas(64) char raw[40];
  std::memcpy(raw + 1, x, 32);
  hexir::TensorView misaligned{raw + 1, hexir::ElementType::kF32, hexir::Span<const int64_t>(xs, 2)};
  if (!(*session)->Run(ins, out_span).ok()) return 2;  // warm-up
  // The hooks must see allocations, or this test could not fail.
  counting = true;
  int* volatile probe = new int(1);
  delete probe;
  void* p = std::malloc(16);
  counting = false;
  std::free(p);
  if (allocations.exchange(0) != 2) {
    std::printf("the counting allocator does not see allocations\n0 passed, 1 failed\n");
    return 1;
  }
  counting = true;
  bool ok = true;
  for (int i = 0; i < 1000; ++i) {
    ok &= (*session)->Run(i % 2 ? ins : hexir::Span<const hexir::TensorView>(&misaligned, 1), out_span).ok();
  }
  counting = false;
  long n = allocations.load();
  for (int i = 0; i < 8; ++i) ok &= y[i] == std::max(x[i] - 1.0f, 0.0f) + 5.0f;
  std::remove(path.c_str());

  // Loops and branches (LOOP, IF, scan rows) allocate nothing either.
  std::string flow_path = hexir::testing::WriteSpec(hexir::testing::ControlFlowExecutableSpec(HEXIR_TEST_KERNELS_PATH),
                                                    "alloc_flow");
  auto flow = hexir::Module::Load(**runtime, flow_path);
  if (!flow.ok()) return 2;
  auto flow_session = hexir::Session::Create(*flow);
  if (!flow_session.ok()) return 2;
  int64_t trips = 3, last = 0, eight[] = {8}, rows_shape[] = {4, 8};
  uint8_t branch = 1;
  float rows[32];
  hexir::TensorView flow_ins[] = {{x, hexir::ElementType::kF32, hexir::Span<const int64_t>(eight, 1)},
                                  {&trips, hexir::ElementType::kI64, hexir::Span<const int64_t>()},
                                  {&branch, hexir::ElementType::kBool, hexir::Span<const int64_t>()}};
  hexir::MutableTensorView flow_outs[] = {{y, hexir::ElementType::kF32, hexir::Span<const int64_t>(eight, 1)},
                                          {rows, hexir::ElementType::kF32, hexir::Span<const int64_t>(rows_shape, 2)},
                                          {&last, hexir::ElementType::kI64, hexir::Span<const int64_t>()}};
  hexir::Span<const hexir::TensorView> flow_in_span(flow_ins, 3);
  hexir::Span<const hexir::MutableTensorView> flow_out_span(flow_outs, 3);
  if (!(*flow_session)->Run(flow_in_span, flow_out_span).ok()) return 2;  // warm-up
  counting = true;
  for (int i = 0; i < 1000; ++i) ok &= (*flow_session)->Run(flow_in_span, flow_out_span).ok();
  counting = false;
  long flow_n = allocations.load() - n;
  n += flow_n;
  ok &= last == 2;
  for (int i = 0; i < 8; ++i) ok &= y[i] == std::max(x[i] - 3.0f, 0.0f);
  std::remove(flow_path.c_str());
  std::printf("%ld heap allocations in 1000 runs of loops and branches\n", flow_n);
  std::printf("%ld heap allocations in 1000 runs; outputs %s\n", n, ok ? "correct" : "WRONG");
  std::printf("%d passed, %d failed\n", (n == 0 && ok) ? 1 : 0, (n == 0 && ok) ? 0 : 1);
  return (n == 0 && ok) ? 0 : 1;
}

// A server-style embedding of the Hexir runtime: load one module, serve requests from several
// threads, each thread with its own sessions, all sharing the module.
//
//   hexir_server MODEL.hxb [--threads T] [--sessions S] [--requests R]
//
// Every request runs deterministic inputs (a function of the request number) and the outputs
// are compared bit for bit with those of a single-threaded run of the same requests: sessions
// share nothing but the immutable module, so concurrency must not change a single bit.
#include <hexir/hexir.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Inputs for request `r`: a cheap, deterministic pattern per element.
void FillInputs(uint64_t r, const std::vector<hexir::TensorInfo>& infos, std::vector<std::vector<float>>& data) {
  for (size_t i = 0; i < infos.size(); ++i) {
    for (size_t k = 0; k < data[i].size(); ++k) {
      uint64_t h = (r * 1000003u + k * 7919u + i * 104729u) % 2001u;
      data[i][k] = static_cast<float>(h) / 1000.0f - 1.0f;
    }
  }
}

// Runs requests [first, first + count) on `session`, storing all outputs into `results`.
bool Serve(hexir::Session& session, uint64_t first, uint64_t count, std::vector<float>& results) {
  const auto& ins = session.inputs();
  const auto& outs = session.outputs();
  std::vector<std::vector<float>> in_data, out_data;
  std::vector<hexir::TensorView> in_views;
  std::vector<hexir::MutableTensorView> out_views;
  size_t per_request = 0;
  for (const auto& t : ins) in_data.emplace_back(t.byte_size / sizeof(float));
  for (const auto& t : outs) {
    out_data.emplace_back(t.byte_size / sizeof(float));
    per_request += t.byte_size / sizeof(float);
  }
  for (size_t i = 0; i < ins.size(); ++i)
    in_views.push_back({in_data[i].data(), ins[i].element_type, hexir::Span<const int64_t>(ins[i].shape)});
  for (size_t i = 0; i < outs.size(); ++i)
    out_views.push_back({out_data[i].data(), outs[i].element_type, hexir::Span<const int64_t>(outs[i].shape)});
  results.assign(per_request * count, 0.0f);
  for (uint64_t r = 0; r < count; ++r) {
    FillInputs(first + r, ins, in_data);
    hexir::Status s = session.Run(hexir::Span<const hexir::TensorView>(in_views),
                                  hexir::Span<const hexir::MutableTensorView>(out_views));
    if (!s.ok()) {
      std::fprintf(stderr, "request %llu failed: %s\n", static_cast<unsigned long long>(first + r),
                   s.ToString().c_str());
      return false;
    }
    float* dst = results.data() + r * per_request;
    for (const auto& o : out_data) {
      std::memcpy(dst, o.data(), o.size() * sizeof(float));
      dst += o.size();
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hexir_server MODEL.hxb [--threads T] [--sessions S] [--requests R]\n");
    return 1;
  }
  int threads = 2, sessions = 8, requests = 1000;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--threads") threads = v;
    else if (flag == "--sessions") sessions = v;
    else if (flag == "--requests") requests = v;
  }
  if (threads < 1 || sessions < 1 || requests < 1) {
    std::fprintf(stderr, "threads, sessions and requests must be positive\n");
    return 1;
  }

  // Load once: one runtime, one module, shared by every session. Each dispatch runs on its
  // calling thread (threads = 1): the server's own threads provide the parallelism.
  hexir::RuntimeOptions options;
  options.threads = 1;
  auto runtime = hexir::Runtime::Create(options);
  if (!runtime.ok()) return std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str()), 1;
  auto module = hexir::Module::Load(**runtime, argv[1]);
  if (!module.ok()) return std::fprintf(stderr, "%s\n", module.status().ToString().c_str()), 1;

  // The reference: every session's requests, run one after another on one session.
  auto reference_session = hexir::Session::Create(*module);
  if (!reference_session.ok()) return std::fprintf(stderr, "%s\n", reference_session.status().ToString().c_str()), 1;
  std::vector<std::vector<float>> reference(static_cast<size_t>(sessions));
  for (int s = 0; s < sessions; ++s)
    if (!Serve(**reference_session, static_cast<uint64_t>(s) * requests, requests, reference[s])) return 1;

  // The server: `sessions` sessions, spread over `threads` threads.
  std::vector<std::unique_ptr<hexir::Session>> pool;
  for (int s = 0; s < sessions; ++s) {
    auto session = hexir::Session::Create(*module);
    if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
    pool.push_back(std::move(*session));
  }
  std::vector<std::vector<float>> results(static_cast<size_t>(sessions));
  std::atomic<bool> ok{true};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int s = t; s < sessions; s += threads)
        if (!Serve(*pool[s], static_cast<uint64_t>(s) * requests, requests, results[s])) ok = false;
    });
  }
  for (std::thread& w : workers) w.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  size_t mismatches = 0;
  for (int s = 0; s < sessions; ++s)
    if (results[s].size() != reference[s].size() ||
        std::memcmp(results[s].data(), reference[s].data(), results[s].size() * sizeof(float)) != 0)
      ++mismatches;
  std::printf("%d sessions x %d requests on %d threads: %.0f requests/s; arena %llu bytes per session\n",
              sessions, requests, threads, sessions * requests / seconds,
              static_cast<unsigned long long>(pool[0]->arena_bytes()));
  std::printf("outputs bit-identical to the single-threaded run: %s\n", mismatches == 0 && ok ? "yes" : "NO");
  // Shut down: every buffer the runtime allocated comes back.
  pool.clear();
  reference_session->reset();
  module->reset();
  std::printf("device buffers outstanding after shutdown: %llu\n",
              static_cast<unsigned long long>((*runtime)->live_buffers()));
  return mismatches == 0 && ok && (*runtime)->live_buffers() == 0 ? 0 : 1;
}

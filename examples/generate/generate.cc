// Greedy generation in one Session::Run: the C++ side of examples/generate.
//
// generate.onnx (make_generate.py) holds the prefill and a Loop of decode steps; compiled by
// hexir-compile, one run takes the prompt and an empty KV cache and returns every token, the
// argmax of each step fed back inside the VM. This program loads the executable, runs it and
// prints the tokens, space-separated.
//
//   hexir_generate generate.hxb TOKEN...      (the prompt's token ids, as many as it was built for)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hexir/hexir.h"

namespace {

int Fail(const hexir::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s generate.hxb TOKEN...\n", argv[0]);
    return 2;
  }
  auto runtime = hexir::Runtime::Create({});
  if (!runtime.ok()) return Fail(runtime.status());
  auto module = hexir::Module::Load(**runtime, argv[1]);
  if (!module.ok()) return Fail(module.status());
  auto inputs = (*module)->inputs();
  auto outputs = (*module)->outputs();
  if (!inputs.ok()) return Fail(inputs.status());
  if (!outputs.ok()) return Fail(outputs.status());
  // Inputs: the prompt [1, P] (int64) and the cache; outputs: the tokens [N] and the cache.
  const hexir::TensorInfo& prompt_info = (*inputs)[0];
  const hexir::TensorInfo& cache_info = (*inputs)[1];
  const hexir::TensorInfo& tokens_info = (*outputs)[0];
  std::vector<int64_t> prompt;
  for (int i = 2; i < argc; ++i) prompt.push_back(std::strtoll(argv[i], nullptr, 10));
  if (static_cast<int64_t>(prompt.size()) != prompt_info.shape[1]) {
    std::fprintf(stderr, "error: the executable takes a %lld-token prompt; got %zu tokens\n",
                 static_cast<long long>(prompt_info.shape[1]), prompt.size());
    return 2;
  }
  std::vector<float> cache(cache_info.byte_size / sizeof(float), 0.0f), cache_out(cache.size());
  std::vector<int64_t> tokens(tokens_info.shape[0]);

  auto session = hexir::Session::Create(*module);
  if (!session.ok()) return Fail(session.status());
  hexir::TensorView ins[] = {
      {prompt.data(), hexir::ElementType::kI64, hexir::Span<const int64_t>(prompt_info.shape)},
      {cache.data(), hexir::ElementType::kF32, hexir::Span<const int64_t>(cache_info.shape)}};
  hexir::MutableTensorView outs[] = {
      {tokens.data(), hexir::ElementType::kI64, hexir::Span<const int64_t>(tokens_info.shape)},
      {cache_out.data(), hexir::ElementType::kF32, hexir::Span<const int64_t>((*outputs)[1].shape)}};
  hexir::Status status = (*session)->Run(hexir::Span<const hexir::TensorView>(ins, 2),
                                         hexir::Span<const hexir::MutableTensorView>(outs, 2));
  if (!status.ok()) return Fail(status);
  for (size_t i = 0; i < tokens.size(); ++i) std::printf("%s%lld", i ? " " : "", static_cast<long long>(tokens[i]));
  std::printf("\n");
  return 0;
}

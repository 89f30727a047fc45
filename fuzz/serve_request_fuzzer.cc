// libFuzzer target: what hexir-serve reads of a client: HTTP/1.1 framing (HttpRequestReader,
// fed in two pieces at a point the input chooses) and the infer request in JSON with binary
// tensor data (ParseInferRequest, against a model of an FP32 [2,3] and an INT8 [4] input).
// Nothing may crash, recurse without bound or read past what it was given.
#include <cstdint>
#include <string>

#include "serve/http_request.h"
#include "serve/protocol.h"

namespace {

hexir::serve::ModelSignature Signature() {
  using hexir::ElementType;
  hexir::serve::ModelSignature s;
  s.model_name = "m";
  s.input_info = {{"x", ElementType::kF32, {2, 3}, 24}, {"b", ElementType::kI8, {4}, 4}};
  s.output_info = {{"y", ElementType::kF32, {2, 3}, 24}};
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hexir::serve::ModelSignature model = Signature();
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t split = size == 0 ? 0 : data[0] % (size + 1);
  hexir::serve::HttpRequestReader reader([](const hexir::serve::HttpRequest&) {
    return hexir::serve::HttpRequestReader::BodyLimit{1 << 16, "the limit"};
  });
  if (reader.Feed(text.data(), split)) reader.Feed(text.data() + split, size - split);
  while (reader.HasRequest()) {
    hexir::serve::HttpRequest request = reader.TakeRequest();
    hexir::serve::InferRequest parsed;
    (void)hexir::serve::ParseInferRequest(request.body, "", model, &parsed);
  }
  // The same bytes as a JSON header and binary data, split where the first byte says.
  hexir::serve::InferRequest parsed;
  (void)hexir::serve::ParseInferRequest(text.substr(0, split), text.substr(split), model, &parsed);
  return 0;
}

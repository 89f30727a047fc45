// The Open Inference Protocol (KServe v2) in JSON: model metadata, and infer requests and
// responses with their tensors as JSON arrays. Every check of a request names the tensor and
// the values involved; the server answers it with 400.
//
// Thread safety: functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hexir/hexir.h"

namespace hexir::serve {

// What the protocol needs of a model: its name and its signature (a ModelPool has one).
struct ModelSignature {
  std::string model_name;
  std::vector<TensorInfo> input_info, output_info;
  // Dynamic batching (Batcher): a request may have 1 to max_batch rows along the leading axis
  // of every input (the same number for all), and gets as many rows of every output; the
  // metadata shows that axis as -1. 0: every shape is exactly the signature's.
  int64_t max_batch = 0;
  // What the model says of itself (Module::metadata: ONNX metadata_props, "onnx:..." fields).
  std::vector<std::pair<std::string, std::string>> metadata;
  const std::string& name() const { return model_name; }
  const std::vector<TensorInfo>& inputs() const { return input_info; }
  const std::vector<TensorInfo>& outputs() const { return output_info; }
};

// "FP32", "INT64", ...: the protocol's name of an element type.
const char* DatatypeName(ElementType type);

// What a client sent (a name, a shape), as an error message may echo it: at most about 200
// characters, the rest counted ("... (4194304 bytes)"): a 4 MB model name must not become a
// 4 MB answer (gRPC then fails on its metadata instead of saying NOT_FOUND).
std::string Excerpt(const std::string& client_text);

// GET /v2/models/{name}: name, platform, versions, inputs and outputs.
nlohmann::json ModelMetadata(const ModelSignature& model);

struct InferRequest {
  std::string id;                              // echoed in the response when given
  int64_t rows = 0;                            // with batching: its rows along the leading axis
  std::vector<std::vector<unsigned char>> inputs;  // per declared input, in signature order
  std::vector<size_t> outputs;                 // the requested outputs (all when none named)
  std::vector<bool> binary_outputs;            // per requested output: as binary data
};

// Parses and checks a request against the model's signature: `header` is the JSON, `binary`
// the bytes after it (the binary tensor data extension: inputs with a
// "parameters": {"binary_data_size": N} take their bytes from it, in order).
Status ParseInferRequest(const std::string& header, const std::string& binary, const ModelSignature& model,
                         InferRequest* request);

// `t` with `rows` rows along its leading axis (a batched request's tensor), or `t` when rows is 0.
TensorInfo WithRows(const TensorInfo& t, int64_t rows);

// The tensor a request sends for `declared` with `shape`: the declared one, or with batching
// its rows (1 to max_batch, the same as `*rows` once an earlier input set it); INVALID_ARGUMENT
// naming the input and the shapes otherwise. REST and gRPC check their inputs with it.
StatusOr<TensorInfo> InputAsSent(const ModelSignature& model, const TensorInfo& declared,
                                 const std::vector<int64_t>& shape, int64_t* rows);

// The response for `request`, with `outputs` (one buffer per declared output): the JSON, and
// the binary data of the outputs asked for as binary (appended after the JSON, whose length
// goes in the Inference-Header-Content-Length header).
struct InferReply {
  std::string json;
  std::string binary;
};
InferReply InferResponse(const ModelSignature& model, const InferRequest& request,
                         const std::vector<std::vector<unsigned char>>& outputs);

}  // namespace hexir::serve

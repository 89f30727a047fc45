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

class ModelPool;

// "FP32", "INT64", ...: the protocol's name of an element type.
const char* DatatypeName(ElementType type);

// GET /v2/models/{name}: name, platform, versions, inputs and outputs.
nlohmann::json ModelMetadata(const ModelPool& model);

struct InferRequest {
  std::string id;                              // echoed in the response when given
  std::vector<std::vector<unsigned char>> inputs;  // per declared input, in signature order
  std::vector<size_t> outputs;                 // the requested outputs (all when none named)
};

// Parses and checks a request body against the model's signature.
Status ParseInferRequest(const std::string& body, const ModelPool& model, InferRequest* request);

// The response for `request`, with `outputs` (one buffer per declared output).
nlohmann::json InferResponse(const ModelPool& model, const InferRequest& request,
                             const std::vector<std::vector<unsigned char>>& outputs);

}  // namespace hexir::serve

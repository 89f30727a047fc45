#include "serve/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>


namespace hexir::serve {
namespace {

using nlohmann::json;

json ShapeJson(const std::vector<int64_t>& shape) {
  json s = json::array();
  for (int64_t d : shape) s.push_back(d);
  return s;
}

json Describe(const TensorInfo& t, bool batched) {
  json shape = ShapeJson(t.shape);
  if (batched && !shape.empty()) shape[0] = -1;  // any number of rows (KServe and Triton write -1)
  return json{{"name", t.name}, {"datatype", DatatypeName(t.element_type)}, {"shape", shape}};
}

// The most levels of arrays and objects a request may nest: a tensor of rank 8 in `data` is 11
// deep in the request. Deeper bodies are refused before parsing (a parser that recursed 90,000
// levels overflowed the server's stack).
constexpr size_t kMaxNesting = 64;

// Whether `text` nests arrays and objects (outside strings) more than `limit` deep; counts
// in one pass, without recursion. Malformed text is left to the parser.
bool NestsDeeper(const std::string& text, size_t limit) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

// The values of `data` in row-major order: a flat array of all of them, or arrays nested as
// the tensor's shape (every level as long as its dimension: a ragged [[400 values], [384
// values]] is no [1, 784] tensor). Iterative, so no nesting reaches the stack.
Status FlattenData(const json& data, const std::string& name, const std::vector<int64_t>& shape, uint64_t elements,
                   std::vector<const json*>& flat) {
  if (!data.is_array()) return InvalidArgumentError("input '", name, "' has \"data\" that is not an array");
  bool nested = std::any_of(data.begin(), data.end(), [](const json& v) { return v.is_array(); });
  if (!nested) {
    if (data.size() != elements)
      return InvalidArgumentError("input '", name, "' needs ", elements, " values, got ", data.size());
    for (const json& v : data) flat.push_back(&v);
    return Status::Ok();
  }
  flat.reserve(elements);
  struct Level {
    const json* array;
    size_t next;
  };
  std::vector<Level> stack{{&data, 0}};
  if (shape.empty() || data.size() != static_cast<uint64_t>(shape[0]))
    return InvalidArgumentError("input '", name, "' has nested \"data\" that does not match its shape ",
                                ShapeJson(shape).dump(), " at level 0");
  while (!stack.empty()) {
    Level& top = stack.back();
    if (top.next == top.array->size()) {
      stack.pop_back();
      continue;
    }
    const json& item = (*top.array)[top.next++];
    size_t level = stack.size();  // the item's level: 1 for data's items
    if (level < shape.size()) {
      if (!item.is_array() || item.size() != static_cast<uint64_t>(shape[level]))
        return InvalidArgumentError("input '", name, "' has nested \"data\" that does not match its shape ",
                                    ShapeJson(shape).dump(), " at level ", level);
      stack.push_back({&item, 0});
    } else {
      if (item.is_array())
        return InvalidArgumentError("input '", name, "' has nested \"data\" deeper than its shape ",
                                    ShapeJson(shape).dump());
      flat.push_back(&item);
    }
  }
  return Status::Ok();
}

template <typename T>
bool StoreInteger(const json& v, unsigned char* out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    T t = static_cast<T>(u);
    std::memcpy(out, &t, sizeof(T));
    return true;
  }
  int64_t i = v.get<int64_t>();
  if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) || i > static_cast<int64_t>(std::numeric_limits<T>::max()))
    return false;
  T t = static_cast<T>(i);
  std::memcpy(out, &t, sizeof(T));
  return true;
}

// One element of `type` from a JSON value; false when it is not one.
bool Store(ElementType type, const json& v, unsigned char* out) {
  switch (type) {
    case ElementType::kF32: {
      if (!v.is_number()) return false;
      // A value beyond FP32's range (1e39) would become infinity: not an FP32 value.
      float f = static_cast<float>(v.get<double>());
      if (!std::isfinite(f)) return false;
      std::memcpy(out, &f, 4);
      return true;
    }
    case ElementType::kF64: {
      if (!v.is_number()) return false;
      double d = v.get<double>();
      std::memcpy(out, &d, 8);
      return true;
    }
    case ElementType::kI64: return StoreInteger<int64_t>(v, out);
    case ElementType::kI32: return StoreInteger<int32_t>(v, out);
    case ElementType::kI16: return StoreInteger<int16_t>(v, out);
    case ElementType::kI8: return StoreInteger<int8_t>(v, out);
    case ElementType::kU8: return StoreInteger<uint8_t>(v, out);
    case ElementType::kU16: return StoreInteger<uint16_t>(v, out);
    case ElementType::kU32: return StoreInteger<uint32_t>(v, out);
    case ElementType::kU64: return StoreInteger<uint64_t>(v, out);
    case ElementType::kBool:
      if (!v.is_boolean()) return false;
      *out = v.get<bool>() ? 1 : 0;
      return true;
    default: return false;
  }
}

json Load(ElementType type, const unsigned char* p) {
  switch (type) {
    case ElementType::kF32: { float f; std::memcpy(&f, p, 4); return std::isfinite(f) ? json(f) : json(nullptr); }
    case ElementType::kF64: { double d; std::memcpy(&d, p, 8); return std::isfinite(d) ? json(d) : json(nullptr); }
    case ElementType::kI64: { int64_t v; std::memcpy(&v, p, 8); return json(v); }
    case ElementType::kI32: { int32_t v; std::memcpy(&v, p, 4); return json(v); }
    case ElementType::kI16: { int16_t v; std::memcpy(&v, p, 2); return json(v); }
    case ElementType::kI8: { int8_t v; std::memcpy(&v, p, 1); return json(v); }
    case ElementType::kU8: return json(static_cast<unsigned>(*p));
    case ElementType::kU16: { uint16_t v; std::memcpy(&v, p, 2); return json(v); }
    case ElementType::kU32: { uint32_t v; std::memcpy(&v, p, 4); return json(v); }
    case ElementType::kU64: { uint64_t v; std::memcpy(&v, p, 8); return json(v); }
    case ElementType::kBool: return json(*p != 0);
    default: return json(nullptr);
  }
}

}  // namespace

const char* DatatypeName(ElementType type) {
  switch (type) {
    case ElementType::kF32: return "FP32";
    case ElementType::kF16: return "FP16";
    case ElementType::kBF16: return "BF16";
    case ElementType::kF64: return "FP64";
    case ElementType::kI8: return "INT8";
    case ElementType::kI16: return "INT16";
    case ElementType::kI32: return "INT32";
    case ElementType::kI64: return "INT64";
    case ElementType::kU8: return "UINT8";
    case ElementType::kU16: return "UINT16";
    case ElementType::kU32: return "UINT32";
    case ElementType::kU64: return "UINT64";
    case ElementType::kBool: return "BOOL";
  }
  return "UNKNOWN";
}

json ModelMetadata(const ModelSignature& model) {
  json inputs = json::array(), outputs = json::array();
  for (const TensorInfo& t : model.inputs()) inputs.push_back(Describe(t, model.max_batch > 0));
  for (const TensorInfo& t : model.outputs()) outputs.push_back(Describe(t, model.max_batch > 0));
  json reply{{"name", model.name()}, {"versions", json::array({"1"})}, {"platform", "hexir"},
             {"inputs", inputs}, {"outputs", outputs}};
  // The protocol's optional "parameters": what the model says of itself (its ONNX metadata).
  if (!model.metadata.empty()) {
    json parameters = json::object();
    for (const auto& [key, value] : model.metadata) parameters[key] = value;
    reply["parameters"] = parameters;
  }
  return reply;
}

Status ParseInferRequest(const std::string& header, const std::string& binary, const ModelSignature& model,
                         InferRequest* request) {
  if (NestsDeeper(header, kMaxNesting))
    return InvalidArgumentError("the request nests arrays and objects more than ", kMaxNesting,
                                " levels deep; send a tensor's \"data\" flat or nested as its shape");
  json doc = json::parse(header, nullptr, /*allow_exceptions=*/false);
  size_t binary_used = 0;
  bool all_binary_outputs = false;
  if (doc.is_object() && doc.contains("parameters") && doc["parameters"].is_object() &&
      doc["parameters"].contains("binary_data_output"))
    all_binary_outputs = doc["parameters"]["binary_data_output"].is_boolean() &&
                         doc["parameters"]["binary_data_output"].get<bool>();
  if (doc.is_discarded() || !doc.is_object()) return InvalidArgumentError("the request body is not a JSON object");
  if (doc.contains("id")) {
    if (!doc["id"].is_string()) return InvalidArgumentError("\"id\" must be a string");
    request->id = doc["id"].get<std::string>();
  }
  if (!doc.contains("inputs") || !doc["inputs"].is_array())
    return InvalidArgumentError("the request has no \"inputs\" array");
  const std::vector<TensorInfo>& declared = model.inputs();
  request->inputs.assign(declared.size(), {});
  std::vector<bool> seen(declared.size(), false);
  for (const json& in : doc["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
      return InvalidArgumentError("every input needs a \"name\"");
    std::string name = in["name"].get<std::string>();
    size_t k = 0;
    while (k < declared.size() && declared[k].name != name) ++k;
    if (k == declared.size())
      return InvalidArgumentError("model '", model.name(), "' has no input '", Excerpt(name), "'");
    if (seen[k]) return InvalidArgumentError("input '", name, "' is given twice");
    seen[k] = true;
    TensorInfo t = declared[k];
    if (!in.contains("datatype") || !in["datatype"].is_string() || in["datatype"].get<std::string>() != DatatypeName(t.element_type))
      return InvalidArgumentError("input '", name, "' must have datatype ", DatatypeName(t.element_type));
    if (!in.contains("shape") || !in["shape"].is_array())
      return InvalidArgumentError("input '", name, "' needs a \"shape\"");
    std::vector<int64_t> shape;
    for (const json& d : in["shape"]) {
      if (!d.is_number_integer()) return InvalidArgumentError("input '", name, "' has a shape that is not integers");
      shape.push_back(d.get<int64_t>());
    }
    HEXIR_ASSIGN_OR_RETURN(t, InputAsSent(model, t, shape, &request->rows));
    uint64_t elements = t.byte_size / ElementTypeSize(t.element_type);
    if (in.contains("parameters") && in["parameters"].is_object() && in["parameters"].contains("binary_data_size")) {
      const json& size = in["parameters"]["binary_data_size"];
      if (!size.is_number_unsigned() || size.get<uint64_t>() != t.byte_size)
        return InvalidArgumentError("input '", name, "' has binary_data_size ", size.dump(), "; its tensor takes ",
                                    t.byte_size, " bytes");
      if (binary.size() - binary_used < t.byte_size)
        return InvalidArgumentError("input '", name, "' needs ", t.byte_size, " bytes of binary data, ",
                                    binary.size() - binary_used, " are left");
      request->inputs[k].assign(binary.begin() + static_cast<std::ptrdiff_t>(binary_used),
                                binary.begin() + static_cast<std::ptrdiff_t>(binary_used + t.byte_size));
      binary_used += t.byte_size;
      continue;
    }
    if (!in.contains("data")) return InvalidArgumentError("input '", name, "' has no \"data\"");
    std::vector<const json*> flat;
    HEXIR_RETURN_IF_ERROR(FlattenData(in["data"], name, t.shape, elements, flat));
    std::vector<unsigned char>& bytes = request->inputs[k];
    bytes.assign(t.byte_size, 0);
    uint64_t size = ElementTypeSize(t.element_type);
    for (uint64_t i = 0; i < elements; ++i)
      if (!Store(t.element_type, *flat[i], bytes.data() + i * size))
        return InvalidArgumentError("input '", name, "' value ", i, " (", flat[i]->dump(), ") is not a ",
                                    DatatypeName(t.element_type), " value (of that type and within its range)");
  }
  for (size_t k = 0; k < declared.size(); ++k)
    if (!seen[k]) return InvalidArgumentError("input '", declared[k].name, "' is missing");
  if (binary_used != binary.size())
    return InvalidArgumentError("the request has ", binary.size(), " bytes of binary data; its inputs take ", binary_used);
  if (doc.contains("outputs")) {
    if (!doc["outputs"].is_array()) return InvalidArgumentError("\"outputs\" must be an array");
    for (const json& out : doc["outputs"]) {
      if (!out.is_object() || !out.contains("name") || !out["name"].is_string())
        return InvalidArgumentError("every requested output needs a \"name\"");
      std::string name = out["name"].get<std::string>();
      size_t k = 0;
      while (k < model.outputs().size() && model.outputs()[k].name != name) ++k;
      if (k == model.outputs().size())
        return InvalidArgumentError("model '", model.name(), "' has no output '", Excerpt(name), "'");
      // Each output once: 300 copies of a 4 MiB output would build a 1.2 GiB answer from a 5 KB
      // request.
      if (std::find(request->outputs.begin(), request->outputs.end(), k) != request->outputs.end())
        return InvalidArgumentError("output '", name, "' is requested more than once");
      request->outputs.push_back(k);
      bool as_binary = all_binary_outputs;
      if (out.contains("parameters") && out["parameters"].is_object() && out["parameters"].contains("binary_data"))
        as_binary = out["parameters"]["binary_data"].is_boolean() && out["parameters"]["binary_data"].get<bool>();
      request->binary_outputs.push_back(as_binary);
    }
  }
  if (request->outputs.empty())
    for (size_t k = 0; k < model.outputs().size(); ++k) {
      request->outputs.push_back(k);
      request->binary_outputs.push_back(all_binary_outputs);
    }
  return Status::Ok();
}

StatusOr<TensorInfo> InputAsSent(const ModelSignature& model, const TensorInfo& declared,
                                 const std::vector<int64_t>& shape, int64_t* rows) {
  TensorInfo t = declared;
  const std::string& name = declared.name;
  if (model.max_batch > 0 && !shape.empty() && shape.size() == t.shape.size() &&
      std::equal(shape.begin() + 1, shape.end(), t.shape.begin() + 1)) {
    // Batched: any rows from 1 to max_batch, the same for every input.
    if (shape[0] < 1 || shape[0] > model.max_batch)
      return InvalidArgumentError("input '", name, "' has ", shape[0], " rows; this model takes 1 to ",
                                  model.max_batch, " (shape ", Describe(t, true)["shape"].dump(), ")");
    if (*rows != 0 && *rows != shape[0])
      return InvalidArgumentError("input '", name, "' has ", shape[0], " rows, another input ", *rows);
    *rows = shape[0];
    t = WithRows(t, shape[0]);
  }
  if (shape != t.shape)
    return InvalidArgumentError("input '", name, "' must have shape ", Describe(t, model.max_batch > 0)["shape"].dump(),
                                ", got ", Excerpt(ShapeJson(shape).dump()));
  return t;
}

std::string Excerpt(const std::string& text) {
  constexpr size_t kMax = 200;
  if (text.size() <= kMax) return text;
  return text.substr(0, kMax / 2) + "... (" + std::to_string(text.size()) + " bytes)";
}

TensorInfo WithRows(const TensorInfo& t, int64_t rows) {
  if (rows <= 0 || t.shape.empty() || t.shape[0] <= 0) return t;
  TensorInfo r = t;
  r.byte_size = t.byte_size / static_cast<uint64_t>(t.shape[0]) * static_cast<uint64_t>(rows);
  r.shape[0] = rows;
  return r;
}

InferReply InferResponse(const ModelSignature& model, const InferRequest& request,
                         const std::vector<std::vector<unsigned char>>& outputs) {
  InferReply reply;
  json result = json::array();
  for (size_t r = 0; r < request.outputs.size(); ++r) {
    size_t k = request.outputs[r];
    const TensorInfo t = WithRows(model.outputs()[k], request.rows);
    json entry = {{"name", t.name}, {"datatype", DatatypeName(t.element_type)}, {"shape", ShapeJson(t.shape)}};
    if (request.binary_outputs[r]) {
      entry["parameters"] = {{"binary_data_size", t.byte_size}};
      reply.binary.append(reinterpret_cast<const char*>(outputs[k].data()), outputs[k].size());
    } else {
      uint64_t size = ElementTypeSize(t.element_type);
      json data = json::array();
      for (uint64_t i = 0; i < t.byte_size / size; ++i) data.push_back(Load(t.element_type, outputs[k].data() + i * size));
      entry["data"] = data;
    }
    result.push_back(entry);
  }
  json response = {{"model_name", model.name()}, {"model_version", "1"}, {"outputs", result}};
  if (!request.id.empty()) response["id"] = request.id;
  reply.json = response.dump();
  return reply;
}

}  // namespace hexir::serve

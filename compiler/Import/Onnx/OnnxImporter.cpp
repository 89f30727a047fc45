//===- OnnxImporter.cpp - ONNX models to a Hexir graph --------------------===//
#include "Import/Onnx/OnnxImporter.h"
#include "Import/Onnx/FloatBits.h"

#include "Dialect/HexirDialect.h"
#include "Import/Onnx/ControlFlowOps.h"
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/GraphValidation.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "serializer/file_format.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace mlir;

namespace hexir::onnx_import {
namespace {

// Nesting levels protobuf may parse: 32 nested subgraphs (Hexir's own limit) need about 100,
// protobuf's default; well below what would exhaust the stack.
constexpr int kProtobufRecursionLimit = 1000;

std::string dirOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string describeDims(const onnx::TensorShapeProto &shape) {
  std::string s;
  for (int d = 0; d < shape.dim_size(); ++d) {
    if (d)
      s += "x";
    const auto &dim = shape.dim(d);
    s += dim.has_dim_value() ? std::to_string(dim.dim_value())
                             : (dim.has_dim_param() ? dim.dim_param() : std::string("?"));
  }
  return s.empty() ? "scalar" : s;
}

class Importer : public SubgraphImporter {
public:
  Importer(MLIRContext &context, const OnnxImportOptions &options)
      : context_(context), options_(options), fileLoc_(FileLineColLoc::get(&context, options.path, 0, 0)) {
    levels_.emplace_back();
  }

  OwningOpRef<ModuleOp> run() {
    if (failed(load()) || failed(validate()) || failed(checkOpset()) || failed(fixInputValues()) ||
        failed(fixInputShapes()) || failed(upgradeOpset()))
      return nullptr;
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc_);
    if (failed(buildFunction(*module)))
      return nullptr;
    (*module)->setAttr(mlir::hexir::kModelMetadataAttrName, modelMetadata());
    // Only now: ONNX 1.12's shape inference dereferences null on some malformed graphs (a Conv
    // whose weight is undefined), which the importer has refused by this point.
    inferShapes();
    if (failed(checkInferredShapes()))
      return nullptr;
    return module;
  }

private:
  InFlightDiagnostic error() { return emitError(fileLoc_); }

  // What the model says of itself, carried into the executable: its metadata_props as they
  // are, and ONNX Runtime's ModelMetadata fields under "onnx:" names.
  DictionaryAttr modelMetadata() {
    NamedAttrList entries;
    auto add = [&](const std::string &key, const std::string &value) {
      if (!value.empty())
        entries.set(StringAttr::get(&context_, key), StringAttr::get(&context_, value));
    };
    add("onnx:producer_name", model_.producer_name());
    add("onnx:producer_version", model_.producer_version());
    add("onnx:domain", model_.domain());
    add("onnx:graph_name", model_.graph().name());
    add("onnx:description", model_.doc_string());
    if (model_.model_version() != 0)
      add("onnx:version", std::to_string(model_.model_version()));
    for (const auto &prop : model_.metadata_props())
      add(prop.key(), prop.value());
    return entries.getDictionary(&context_);
  }

  LogicalResult load() {
    std::string bytes;
    if (options_.contents) {
      bytes = *options_.contents;
    } else {
      std::ifstream in(options_.path, std::ios::binary);
      if (!in)
        return error() << "cannot read '" << options_.path << "'";
      std::stringstream buffer;
      buffer << in.rdbuf();
      bytes = buffer.str();
    }
    // Protobuf's default nesting limit (100) counts GraphProto, NodeProto and AttributeProto
    // levels: 32 nested Loops, which Hexir compiles, need about 3 each.
    google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t *>(bytes.data()),
                                                  static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
    stream.SetRecursionLimit(kProtobufRecursionLimit);
    if (bytes.size() > INT32_MAX || !model_.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
      return error() << "'" << options_.path << "' is not a valid ONNX model (protobuf parse failed)";
    if (!model_.has_graph())
      return error() << "'" << options_.path << "' has no graph";
    for (const auto &init : model_.graph().initializer())
      initializerNames_.insert(init.name());
    return success();
  }

  LogicalResult validate() {
    std::string problem = validateGraph(model_.graph());
    if (!problem.empty())
      return error() << "invalid ONNX graph: " << problem;
    return success();
  }

  LogicalResult checkOpset() {
    bool found = false;
    for (const auto &imp : model_.opset_import()) {
      if (imp.domain().empty() || imp.domain() == "ai.onnx") {
        opset_ = imp.version();
        found = true;
      }
    }
    if (!found)
      return error() << "the model imports no default-domain (ai.onnx) opset";
    if (opset_ < kMinOpset || opset_ > kMaxOpset)
      return error() << "the model uses opset " << opset_ << "; Hexir imports opsets " << kMinOpset
                     << " to " << kMaxOpset << ": export with opset_version between " << kMinOpset
                     << " and " << kMaxOpset;
    return success();
  }

  // Opsets 7 to 12 are raised to 13 by ONNX's own version converter (libonnx-dev), whose
  // adapters rewrite what changed (attributes that became inputs, Softmax's axis, ...); the
  // converters here then implement opset 13 and later. The converter trusts its input and some
  // adapters need shapes (Softmax's), so ONNX's checker runs first (every node against its
  // schema), then shape inference (on the fixed input shapes); the graph is validated again
  // after.
  LogicalResult upgradeOpset() {
    if (opset_ >= kFirstConvertedOpset)
      return success();
    for (const auto &imp : model_.opset_import())
      if (!imp.domain().empty() && imp.domain() != "ai.onnx")
        return error() << "the model uses opset " << opset_ << " and the domain '" << imp.domain()
                       << "', which ONNX's version converter cannot raise to opset " << kFirstConvertedOpset
                       << ": export with opset_version " << kFirstConvertedOpset << " or newer";
    int64_t from = opset_;
    try {
      onnx::checker::check_model(model_);
    } catch (const std::exception &e) {
      std::string why = e.what();
      why = why.substr(0, std::min<size_t>(why.find('\n'), 300));
      return error() << "the model uses opset " << from << " and is not valid ONNX, so it cannot be raised to opset "
                     << kFirstConvertedOpset << ": " << why;
    }
    try {
      onnx::shape_inference::InferShapes(model_);
      model_ = onnx::version_conversion::ConvertVersion(model_, static_cast<int>(kFirstConvertedOpset));
    } catch (const std::exception &e) {
      std::string why = e.what();
      why = why.substr(0, std::min<size_t>(why.find('\n'), 300));
      return error() << "the model uses opset " << from << ", and ONNX's version converter could not raise it to "
                     << kFirstConvertedOpset << " (" << why << "): export with opset_version "
                     << kFirstConvertedOpset << " or newer";
    }
    opset_ = kFirstConvertedOpset;
    initializerNames_.clear();
    for (const auto &init : model_.graph().initializer())
      initializerNames_.insert(init.name());
    return validate();
  }

  bool isInitializer(const std::string &name) const { return initializerNames_.count(name) != 0; }

  // --fix-input: each named input becomes an initializer of its element type holding the value
  // (its declared shape, or the .npy file's), and leaves the graph's inputs.
  LogicalResult fixInputValues() {
    onnx::GraphProto *graph = model_.mutable_graph();
    for (const auto &[name, value] : options_.fixedInputs) {
      int index = -1;
      std::string list;
      for (int k = 0; k < graph->input_size(); ++k) {
        if (isInitializer(graph->input(k).name()))
          continue;
        list += (list.empty() ? "" : ", ") + graph->input(k).name();
        if (graph->input(k).name() == name)
          index = k;
      }
      if (index < 0)
        return error() << "--fix-input names '" << name << "', which is not an input of the model (inputs: " << list
                       << ")";
      const onnx::ValueInfoProto &input = graph->input(index);
      if (!input.type().has_tensor_type())
        return error() << "--fix-input: input '" << name << "' is not a tensor";
      const auto &tensorType = input.type().tensor_type();
      std::vector<int64_t> shape = value.shape;
      bool declared = tensorType.has_shape();
      for (int d = 0; declared && d < tensorType.shape().dim_size(); ++d)
        declared = tensorType.shape().dim(d).has_dim_value();
      int64_t count = static_cast<int64_t>(value.count());
      if (!value.hasShape) {
        int rank = tensorType.has_shape() ? tensorType.shape().dim_size() : -1;
        if (declared) {
          shape.clear();
          for (const auto &dim : tensorType.shape().dim())
            shape.push_back(dim.dim_value());
        } else if (rank == 1) {
          shape = {count};
        } else {
          return error() << "--fix-input " << name << ": the input's shape is not fixed ("
                         << (tensorType.has_shape() ? describeDims(tensorType.shape()) : std::string("unknown"))
                         << "); give the value as a .npy file, which has a shape";
        }
      } else if (tensorType.has_shape()) {
        bool same = tensorType.shape().dim_size() == static_cast<int>(shape.size());
        for (int d = 0; same && d < tensorType.shape().dim_size(); ++d)
          same = !tensorType.shape().dim(d).has_dim_value() || tensorType.shape().dim(d).dim_value() == shape[d];
        if (!same)
          return error() << "--fix-input " << name << " has shape " << shapeString(shape) << ", but the input is "
                         << describeDims(tensorType.shape());
      }
      int64_t elements = 1;
      for (int64_t d : shape)
        if (d < 0 || __builtin_mul_overflow(elements, d, &elements))
          return error() << "--fix-input " << name << ": bad shape " << shapeString(shape);
      if (elements != count)
        return error() << "--fix-input " << name << " gives " << count << " values for the input's shape "
                       << shapeString(shape) << " (" << elements << " elements)";
      onnx::TensorProto tensor;
      tensor.set_name(name);
      tensor.set_data_type(tensorType.elem_type());
      for (int64_t d : shape)
        tensor.add_dims(d);
      switch (tensorType.elem_type()) {
      case onnx::TensorProto::FLOAT:
        for (int64_t k = 0; k < count; ++k)
          tensor.add_float_data(static_cast<float>(value.isFloat ? value.floats[k] : static_cast<double>(value.ints[k])));
        break;
      case onnx::TensorProto::INT64:
      case onnx::TensorProto::INT32:
      case onnx::TensorProto::INT8:
      case onnx::TensorProto::UINT8:
      case onnx::TensorProto::BOOL: {
        auto type = tensorType.elem_type();
        int64_t lo = type == onnx::TensorProto::INT64   ? INT64_MIN
                     : type == onnx::TensorProto::INT32 ? INT32_MIN
                     : type == onnx::TensorProto::INT8  ? -128
                                                        : 0;
        int64_t hi = type == onnx::TensorProto::INT64   ? INT64_MAX
                     : type == onnx::TensorProto::INT32 ? INT32_MAX
                     : type == onnx::TensorProto::INT8  ? 127
                     : type == onnx::TensorProto::UINT8 ? 255
                                                        : 1;
        for (int64_t k = 0; k < count; ++k) {
          if (value.isFloat && (value.floats[k] != std::floor(value.floats[k]) || !std::isfinite(value.floats[k])))
            return error() << "--fix-input " << name << ": " << value.floats[k] << " is not an integer, and the input is "
                           << onnx::TensorProto::DataType_Name(type);
          // Compared as doubles only for float values; integers exactly.
          bool inRange = value.isFloat ? value.floats[k] >= static_cast<double>(lo) && value.floats[k] <= static_cast<double>(hi)
                                       : value.ints[k] >= lo && value.ints[k] <= hi;
          if (!inRange)
            return error() << "--fix-input " << name << ": value " << k << " is out of range for "
                           << onnx::TensorProto::DataType_Name(type);
          int64_t v = value.isFloat ? static_cast<int64_t>(value.floats[k]) : value.ints[k];
          if (type == onnx::TensorProto::INT64)
            tensor.add_int64_data(v);
          else
            tensor.add_int32_data(static_cast<int32_t>(v));
        }
        break;
      }
      default:
        return error() << "--fix-input " << name << ": the input's element type "
                       << onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(tensorType.elem_type()))
                       << " cannot be fixed";
      }
      *graph->add_initializer() = std::move(tensor);
      graph->mutable_input()->DeleteSubrange(index, 1);
      initializerNames_.insert(name);
    }
    return success();
  }

  // Applies --input-shape and rejects dimensions that remain unknown.
  LogicalResult fixInputShapes() {
    onnx::GraphProto *graph = model_.mutable_graph();
    std::vector<std::string> names;
    // The inputs' symbolic dimensions: what --dim may name.
    std::set<std::string> symbolic;
    for (const auto &input : graph->input())
      if (!isInitializer(input.name()) && input.type().has_tensor_type() && input.type().tensor_type().has_shape())
        for (const auto &dim : input.type().tensor_type().shape().dim())
          if (dim.has_dim_param() && !dim.has_dim_value())
            symbolic.insert(dim.dim_param());
    for (const auto &[dim, value] : options_.dims)
      if (!symbolic.count(dim)) {
        std::string list;
        for (const auto &n : symbolic)
          list += (list.empty() ? "'" : ", '") + n + "'";
        return error() << "--dim names '" << dim << "', which is not a symbolic dimension of the model's inputs ("
                       << (list.empty() ? std::string("it has none: every dimension is fixed") : "it has " + list)
                       << ")";
      }
    for (auto &input : *graph->mutable_input()) {
      if (isInitializer(input.name()))
        continue;
      names.push_back(input.name());
      if (!input.type().has_tensor_type())
        return error() << "input '" << input.name() << "' is not a tensor";
      auto *tensor = input.mutable_type()->mutable_tensor_type();
      auto it = options_.inputShapes.find(input.name());
      if (it != options_.inputShapes.end()) {
        const std::vector<int64_t> &shape = it->second;
        if (tensor->has_shape() && tensor->shape().dim_size() != static_cast<int>(shape.size()))
          return error() << "--input-shape " << input.name() << "=" << shapeString(shape) << " has rank "
                         << shape.size() << ", but the input has rank " << tensor->shape().dim_size()
                         << " (" << describeDims(tensor->shape()) << ")";
        for (size_t d = 0; tensor->has_shape() && d < shape.size(); ++d) {
          const auto &dim = tensor->shape().dim(static_cast<int>(d));
          if (dim.has_dim_value() && dim.dim_value() != shape[d])
            return error() << "--input-shape " << input.name() << "=" << shapeString(shape)
                           << " changes dimension " << d << ", which the model fixes to " << dim.dim_value()
                           << " (" << describeDims(tensor->shape()) << ")";
        }
        tensor->mutable_shape()->clear_dim();
        for (int64_t d : shape)
          tensor->mutable_shape()->add_dim()->set_dim_value(d);
        continue;
      }
      // --dim: every axis of a symbolic dimension it names takes its value.
      for (int d = 0; tensor->has_shape() && d < tensor->shape().dim_size(); ++d) {
        auto *dim = tensor->mutable_shape()->mutable_dim(d);
        if (dim->has_dim_param()) {
          auto value = options_.dims.find(dim->dim_param());
          if (value != options_.dims.end())
            dim->set_dim_value(value->second);
        }
      }
      if (!tensor->has_shape())
        return error() << "input '" << input.name() << "' has an unknown shape; give it with --input-shape "
                       << input.name() << "=DIMS (e.g. 1x3x224x224)";
      for (int d = 0; d < tensor->shape().dim_size(); ++d) {
        const auto &dim = tensor->shape().dim(d);
        if (!dim.has_dim_value() || dim.dim_value() < 0)
          return error() << "input '" << input.name() << "' has a "
                         << (dim.has_dim_param() ? "symbolic dimension '" + dim.dim_param() + "'" : std::string("unknown dimension"))
                         << " at axis " << d << " (" << describeDims(tensor->shape())
                         << "); Hexir compiles static shapes: fix it with --input-shape " << input.name()
                         << "=" << "DIMS (e.g. 1x3x224x224)"
                         << (dim.has_dim_param() ? ", or compile a function per size with --dim " + dim.dim_param() +
                                                       "=1,4,16 (shape buckets)"
                                                 : std::string());
      }
    }
    for (const auto &entry : options_.inputShapes)
      if (std::find(names.begin(), names.end(), entry.first) == names.end()) {
        std::string list;
        for (const auto &n : names)
          list += (list.empty() ? "" : ", ") + n;
        return error() << "--input-shape names '" << entry.first << "', which is not an input of the model (inputs: "
                       << list << ")";
      }
    return success();
  }

  // ONNX shape inference gives a second opinion on every shape the importer computes. Debian's
  // ONNX 1.12 knows opsets up to 17: for a newer model it would apply older schemas (ReduceMean
  // reading axes from an attribute that opset 18 made an input), so there is no second opinion.
  void inferShapes() {
    if (opset_ > 17)
      return;
    try {
      onnx::shape_inference::InferShapes(model_);
    } catch (const std::exception &e) {
      emitWarning(fileLoc_) << "ONNX shape inference failed (" << e.what()
                            << "); continuing with Hexir's own shapes";
      return;
    }
    for (const auto &info : model_.graph().value_info())
      if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
        inferred_[info.name()] = info.type().tensor_type().shape();
  }

  LogicalResult buildFunction(ModuleOp module) {
    module_ = module;
    const onnx::GraphProto &graph = model_.graph();
    std::string baseDir = dirOf(options_.path);
    for (const auto &init : graph.initializer()) {
      std::string err;
      auto t = readTensor(init, baseDir, err);
      if (failed(t))
        return error() << "initializer: " << err;
      OnnxValue v = OnnxValue::ofConstant(std::move(*t));
      v.onnxType = storedAsFloat(init.data_type()) ? init.data_type() : 0;
      values()[init.name()] = std::move(v);
    }

    OpBuilder b(&context_);
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> argTypes;
    SmallVector<std::pair<std::string, DType>> args;
    SmallVector<int32_t> argOnnxTypes;
    for (const auto &input : graph.input()) {
      if (isInitializer(input.name()))
        continue;
      const auto &tt = input.type().tensor_type();
      DType type;
      if (!dtypeFromOnnx(tt.elem_type(), type))
        return error() << "input '" << input.name() << "' has element type " << onnxTypeName(tt.elem_type())
                       << "; Hexir inputs are float, float16, bfloat16, double, int64, int32, int16, int8, uint64, "
                          "uint32, uint16, uint8 or bool";
      std::vector<int64_t> shape;
      for (const auto &dim : tt.shape().dim())
        shape.push_back(dim.dim_value());
      std::string size = sizeProblem(shape, type);
      if (!size.empty())
        return error() << "input '" << input.name() << "' of shape " << shapeString(shape) << " " << size;
      argTypes.push_back(RankedTensorType::get(shape, interfaceType(tt.elem_type(), type)));
      args.push_back({input.name(), type});
      argOnnxTypes.push_back(tt.elem_type());
    }
    auto fn = func::FuncOp::create(b, fileLoc_, options_.entry, b.getFunctionType(argTypes, {}));
    Block *body = fn.addEntryBlock();
    for (const std::string &name : options_.donated)
      if (llvm::none_of(args, [&](const auto &arg) { return arg.first == name; })) {
        std::string list;
        for (const auto &arg : args)
          list += (list.empty() ? "" : ", ") + arg.first;
        return error() << "--donate names '" << name << "', which is not an input of the model (inputs: " << list
                       << ")";
      }
    for (auto [i, arg] : llvm::enumerate(args)) {
      fn.setArgAttr(i, mlir::hexir::kNameAttrName, b.getStringAttr(arg.first));
      if (llvm::is_contained(options_.donated, arg.first))
        fn.setArgAttr(i, mlir::hexir::kDonateAttrName, b.getUnitAttr());
      if (const char *declared = declaredName(argOnnxTypes[i]))
        fn.setArgAttr(i, mlir::hexir::kElementTypeAttrName, b.getStringAttr(declared));
      auto shape = cast<RankedTensorType>(argTypes[i]).getShape();
      // An input without elements carries no data: the graph reads it as a known, empty value.
      feeders_[arg.first] = {arg.first};
      OnnxValue v = llvm::is_contained(shape, 0)
                        ? OnnxValue::ofConstant(HostTensor::zeros(arg.second, {shape.begin(), shape.end()}))
                        : OnnxValue::ofValue(body->getArgument(i), arg.second);
      if (storedAsFloat(argOnnxTypes[i])) {
        v.onnxType = argOnnxTypes[i];
        if (v.value) {
          b.setInsertionPointToEnd(body);
          v.value = convertInterface(b, v.value, argOnnxTypes[i], /*toGraph=*/true);
        }
      }
      if (arg.second == DType::kBool && v.value) {
        b.setInsertionPointToEnd(body);
        v.value = normalizeBool(b, v.value);
      }
      values()[arg.first] = std::move(v);
    }
    b.setInsertionPointToEnd(body);

    for (int n = 0; n < graph.node_size(); ++n)
      if (failed(convertNode(b, graph.node(n), n)))
        return failure();

    SmallVector<Value> results;
    SmallVector<Type> resultTypes;
    SmallVector<int32_t> outputOnnxTypes;
    for (const auto &output : graph.output()) {
      auto it = values().find(output.name());
      if (it == values().end())
        return error() << "graph output '" << output.name() << "' is not computed by any node";
      OnnxValue &v = it->second;
      // The declared element type must be the one computed: never a silently different type.
      // (Undeclared: the type the value is known to have.)
      int32_t declared = output.type().tensor_type().elem_type();
      if (declared == onnx::TensorProto::UNDEFINED)
        declared = v.onnxType;
      DType expected;
      if (declared != onnx::TensorProto::UNDEFINED && (!dtypeFromOnnx(declared, expected) || expected != v.type))
        return error() << "graph output '" << output.name() << "' is declared " << onnxTypeName(declared)
                       << ", which Hexir does not compute (it has " << dtypeName(v.type) << ")";
      Value value = v.value ? v.value : constantTensor(b, fileLoc_, *v.constant);
      if (storedAsFloat(declared))
        value = convertInterface(b, value, declared, /*toGraph=*/false);
      outputOnnxTypes.push_back(declared);
      results.push_back(value);
      resultTypes.push_back(value.getType());
    }
    func::ReturnOp::create(b, fileLoc_, results);
    fn.setType(b.getFunctionType(argTypes, resultTypes));
    for (auto [i, output] : llvm::enumerate(graph.output())) {
      fn.setResultAttr(i, mlir::hexir::kNameAttrName, b.getStringAttr(output.name()));
      if (const char *declared = declaredName(outputOnnxTypes[i]))
        fn.setResultAttr(i, mlir::hexir::kElementTypeAttrName, b.getStringAttr(declared));
    }
    return success();
  }

  // float16, bfloat16 and double: float values stored as f32 in the graph.
  static bool storedAsFloat(int32_t onnxType) {
    return onnxType == onnx::TensorProto::FLOAT16 || onnxType == onnx::TensorProto::BFLOAT16 ||
           onnxType == onnx::TensorProto::DOUBLE;
  }
  // The element type a graph input or output of `onnxType` has at the interface: 16-bit floats
  // as their bits (i16), double as f64, the others the graph's own type.
  Type interfaceType(int32_t onnxType, DType type) {
    if (onnxType == onnx::TensorProto::FLOAT16 || onnxType == onnx::TensorProto::BFLOAT16)
      return IntegerType::get(&context_, 16);
    if (onnxType == onnx::TensorProto::DOUBLE)
      return Float64Type::get(&context_);
    return elementType(&context_, type);
  }
  // What kElementTypeAttrName says of an interface tensor of `onnxType`, if anything.
  static const char *declaredName(int32_t onnxType) {
    switch (onnxType) {
    case onnx::TensorProto::INT8: return "i8";
    case onnx::TensorProto::UINT8: return "u8";
    case onnx::TensorProto::UINT16: return "u16";
    case onnx::TensorProto::UINT32: return "u32";
    case onnx::TensorProto::UINT64: return "u64";
    case onnx::TensorProto::FLOAT16: return "f16";
    case onnx::TensorProto::BFLOAT16: return "bf16";
    default: return nullptr;
    }
  }
  // A bool input's bytes as ONNX and NumPy read them: any non-zero byte is true (1). A caller's
  // buffer may hold 2 or 255 (raw gRPC contents, a .npy written byte by byte), which Not and
  // Cast would otherwise pass on as such; one elementwise op, fused into its readers.
  Value normalizeBool(OpBuilder &b, Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t rank = type.getRank();
    Value init = tensor::EmptyOp::create(b, fileLoc_, type.getShape(), type.getElementType());
    SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, &context_));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, fileLoc_, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value zero = arith::ConstantIntOp::create(nb, nl, 0, 8);
                 Value set = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, a[0], zero);
                 linalg::YieldOp::create(nb, nl, ValueRange{arith::ExtUIOp::create(nb, nl, nb.getI8Type(), set)});
               })
        .getResult(0);
  }
  // One kernel converting an interface tensor of `onnxType` to the graph's f32 (`toGraph`) or
  // back: the bits of a 16-bit float decoded or encoded, a double truncated or extended.
  Value convertInterface(OpBuilder &b, Value v, int32_t onnxType, bool toGraph) {
    auto type = cast<RankedTensorType>(v.getType());
    Type to = toGraph ? Type(b.getF32Type()) : interfaceType(onnxType, DType::kFloat);
    int64_t rank = type.getRank();
    Value init = tensor::EmptyOp::create(b, fileLoc_, type.getShape(), to);
    SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, &context_));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    bool bf16 = onnxType == onnx::TensorProto::BFLOAT16;
    bool isDouble = onnxType == onnx::TensorProto::DOUBLE;
    return linalg::GenericOp::create(
               b, fileLoc_, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value r = isDouble ? (toGraph ? arith::TruncFOp::create(nb, nl, to, a[0]).getResult()
                                               : arith::ExtFOp::create(nb, nl, to, a[0]).getResult())
                                    : toGraph ? decodeHalf(nb, nl, a[0], bf16)
                                              : encodeHalf(nb, nl, a[0], bf16);
                 linalg::YieldOp::create(nb, nl, r);
               })
        .getResult(0);
  }

  // The value named `name` as level `level` sees it. A run-time value of an enclosing graph
  // becomes a capture: an argument of each body between (values known at import are read
  // where they are: folded, not captured).
  OnnxValue *lookup(const std::string &name, size_t level) {
    Level &here = levels_[level];
    if (auto it = here.values.find(name); it != here.values.end())
      return &it->second;
    if (level == 0)
      return nullptr;
    OnnxValue *outer = lookup(name, level - 1);
    if (!outer || outer->isConstant())
      return outer;
    OnnxValue captured = *outer;
    captured.value = here.fn.getBody().front().addArgument(outer->value.getType(), here.fn.getLoc());
    // Its int8 source lives in the enclosing function, which a body cannot read: the body sees
    // the dequantized value only (its Conv or MatMul runs in float).
    captured.dequantized.reset();
    here.captureNames.push_back(name);
    return &(here.values[name] = std::move(captured));
  }

  FailureOr<Body> importBody(const onnx::GraphProto &graph, const std::string &kind,
                             const std::vector<OnnxValue> &formals) override {
    // The executable's bodies nest at most this deep (the interpreter recurses per level).
    if (levels_.size() > ::hexir::serializer::kMaxBodyNesting)
      return error() << "Loop and If subgraphs nest more than " << ::hexir::serializer::kMaxBodyNesting
                     << " deep; Hexir runs at most that many levels";
    if (graph.input_size() != static_cast<int>(formals.size()))
      return error() << kind << " body graph '" << graph.name() << "' takes " << graph.input_size()
                     << " inputs, not " << formals.size();
    OpBuilder mb(&context_);
    mb.setInsertionPointToEnd(module_.getBody());
    std::string name = options_.entry + "_" + kind + "_" + std::to_string(bodies_++);
    Location loc = NameLoc::get(mb.getStringAttr(graph.name().empty() ? name : graph.name()), fileLoc_);
    auto fn = func::FuncOp::create(mb, loc, name, mb.getFunctionType({}, {}));
    fn.setPrivate();
    fn->setAttr(mlir::hexir::kBodyAttrName, mb.getUnitAttr());
    Block *block = fn.addEntryBlock();
    levels_.emplace_back();
    levels_.back().fn = fn;
    for (auto [k, formal] : llvm::enumerate(formals))
      levels_.back().values[graph.input(k).name()] =
          formal.isConstant() ? formal
                              : OnnxValue::ofValue(block->addArgument(tensorType(&context_, formal.shape, formal.type), loc),
                                                   formal.type);
    OpBuilder b(&context_);
    b.setInsertionPointToEnd(block);
    FailureOr<std::vector<OnnxValue>> outputs = importNodes(b, graph);
    Level level = std::move(levels_.back());
    levels_.pop_back();
    if (failed(outputs))
      return failure();
    Body body;
    body.fn = fn;
    body.outputs = std::move(*outputs);
    SmallVector<Value> results;
    for (const OnnxValue &v : body.outputs)
      results.push_back(v.value ? v.value : constantTensor(b, loc, *v.constant));
    func::ReturnOp::create(b, loc, results);
    fn.setType(b.getFunctionType(block->getArgumentTypes(), ValueRange(results).getTypes()));
    // The captures as the enclosing graph has them (itself capturing from further out).
    for (const std::string &captured : level.captureNames)
      body.captures.push_back(lookup(captured, levels_.size() - 1)->value);
    return body;
  }

  FailureOr<std::vector<OnnxValue>> importInline(OpBuilder &b, const onnx::GraphProto &graph) override {
    return importNodes(b, graph);
  }

  // A subgraph's initializers and nodes into the current level; its outputs.
  FailureOr<std::vector<OnnxValue>> importNodes(OpBuilder &b, const onnx::GraphProto &graph) {
    for (const auto &init : graph.initializer()) {
      std::string err;
      auto t = readTensor(init, dirOf(options_.path), err);
      if (failed(t))
        return error() << "initializer of subgraph '" << graph.name() << "': " << err;
      values()[init.name()] = OnnxValue::ofConstant(std::move(*t));
    }
    for (int n = 0; n < graph.node_size(); ++n)
      if (failed(convertNode(b, graph.node(n), n)))
        return failure();
    std::vector<OnnxValue> outputs;
    for (const auto &output : graph.output()) {
      OnnxValue *v = lookup(output.name(), levels_.size() - 1);
      if (!v)
        return error() << "output '" << output.name() << "' of subgraph '" << graph.name()
                       << "' is not computed by any node";
      outputs.push_back(*v);
    }
    return outputs;
  }

  LogicalResult convertNode(OpBuilder &b, const onnx::NodeProto &node, int index) {
    std::string name = nodeName(node, index);
    Location loc = NameLoc::get(b.getStringAttr(name), fileLoc_);
    onnx::NodeProto named = node;
    named.set_name(name);
    std::vector<OnnxValue *> inputs;
    for (const std::string &in : node.input()) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      OnnxValue *value = lookup(in, levels_.size() - 1);
      if (!value)
        return emitError(loc) << "node '" << name << "' (" << node.op_type() << ") reads '" << in
                              << "', which no earlier node, input or initializer defines";
      inputs.push_back(value);
    }
    // The model inputs each output is computed from: what a user can fix (--fix-input) when an
    // input a converter needs at compile time is not known.
    std::set<std::string> fedBy;
    std::vector<std::vector<std::string>> inputFeeders;
    for (const std::string &in : node.input()) {
      auto it = feeders_.find(in);
      inputFeeders.push_back(it == feeders_.end() ? std::vector<std::string>{}
                                                  : std::vector<std::string>(it->second.begin(), it->second.end()));
      fedBy.insert(inputFeeders.back().begin(), inputFeeders.back().end());
    }
    NodeContext ctx(b, loc, named, opset_, inputs);
    ctx.int8Kernels = options_.int8Kernels;
    ctx.setInputFeeders(std::move(inputFeeders));
    std::string domain = node.domain();
    if (!domain.empty() && domain != "ai.onnx")
      return ctx.error() << "unsupported op: domain '" << domain << "' is not supported";
    const OpSupport *op = findOp(node.op_type());
    if (!op)
      return ctx.error() << "unsupported op '" << node.op_type()
                         << "'; hexir-compile --list-ops lists the supported ops";
    if (opset_ < op->sinceOpset || opset_ > op->untilOpset)
      return ctx.error() << "op '" << node.op_type() << "' is supported in opsets " << op->sinceOpset << " to "
                         << op->untilOpset;
    for (const auto &a : node.attribute())
      if (!knowsAttribute(*op, a.name()))
        return ctx.error() << "unsupported attribute '" << a.name() << "'";
    // Every ONNX op has at least one output; converters size their results by the outputs.
    if (node.output_size() == 0)
      return ctx.error() << "has no outputs";
    for (OnnxValue *in : inputs)
      if (in && isUnsigned(in->type) && !in->isConstant() && !op->readsUnsigned)
        return ctx.error() << "reads a " << dtypeName(in->type) << " tensor; Hexir computes on unsigned integers "
                              "in the arithmetic, comparison and bit ops (Add, Div, Mod, Min, Less, BitShift, ...), the "
                              "quantized ops, Cast and data movement (Reshape, Transpose, Concat, Slice, Gather, ...)";
    // Converters may then read every required input without checking.
    size_t required = op->minInputs < 0 ? std::max<size_t>(1, inputs.size()) : op->minInputs;
    for (size_t i = 0; i < required; ++i)
      if (i >= inputs.size() || !inputs[i])
        return ctx.error() << "input " << i << " is missing (the op needs "
                           << (op->minInputs < 0 ? std::string("one or more inputs, none omitted")
                                                 : std::to_string(op->minInputs) + " inputs") << ")";
    if (failed(op->convert ? op->convert(ctx) : op->convertSubgraphs(ctx, *this)))
      return failure();
    std::vector<OnnxValue> outputs = ctx.takeOutputs();
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string &out = node.output(k);
      if (out.empty())
        continue;
      if (k >= static_cast<int>(outputs.size()) || (!outputs[k].value && !outputs[k].constant))
        return ctx.error() << "output " << k << " ('" << out << "') is not supported";
      std::string size = sizeProblem(outputs[k].shape, outputs[k].type);
      if (!size.empty())
        return ctx.error() << "output '" << out << "' of shape " << shapeString(outputs[k].shape) << " " << size;
      computed_.insert_or_assign(out, std::make_pair(loc, outputs[k].shape));
      // A tensor without elements is known: later ops fold it, no kernel sees it.
      if (outputs[k].numElements() == 0 && !outputs[k].isConstant())
        outputs[k] = OnnxValue::ofConstant(HostTensor::zeros(outputs[k].type, outputs[k].shape));
      if (!outputs[k].isConstant() && !fedBy.empty())
        feeders_[out] = fedBy;
      values()[out] = std::move(outputs[k]);
    }
    return success();
  }

  // A static dimension on which Hexir and ONNX shape inference disagree is an error: one of
  // them is wrong, and a silently different graph is worse than none.
  LogicalResult checkInferredShapes() {
    for (const auto &[name, computed] : computed_) {
      auto it = inferred_.find(name);
      if (it == inferred_.end())
        continue;
      const onnx::TensorShapeProto &shape = it->second;
      const std::vector<int64_t> &mine = computed.second;
      if (shape.dim_size() != static_cast<int>(mine.size()))
        continue;  // ONNX 1.12 leaves some ranks wrong for folded shape values
      for (int d = 0; d < shape.dim_size(); ++d)
        if (shape.dim(d).has_dim_value() && shape.dim(d).dim_value() != mine[d])
          return emitError(computed.first) << "Hexir computes shape " << shapeString(mine) << " for '" << name
                                           << "', but ONNX shape inference says " << describeDims(shape)
                                           << "; please report this model";
    }
    return success();
  }

  MLIRContext &context_;
  const OnnxImportOptions &options_;
  Location fileLoc_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  // The graph being built and the bodies around it: levels_[0] is the model's graph, each
  // further level a Loop or If subgraph inside the one before.
  struct Level {
    std::map<std::string, OnnxValue> values;
    func::FuncOp fn;                        // the body function (null for the model's graph)
    std::vector<std::string> captureNames;  // its arguments after the formal inputs
  };
  std::vector<Level> levels_;
  std::map<std::string, OnnxValue> &values() { return levels_.back().values; }
  ModuleOp module_;
  unsigned bodies_ = 0;
  std::set<std::string> initializerNames_;
  std::map<std::string, onnx::TensorShapeProto> inferred_;
  std::map<std::string, std::pair<Location, std::vector<int64_t>>> computed_;  // node outputs
  std::map<std::string, std::set<std::string>> feeders_;  // run-time value -> the model inputs it is computed from
};

} // namespace

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, const OnnxImportOptions &options) {
  return Importer(context, options).run();
}

void printSupportedOps(llvm::raw_ostream &os) {
  os << "ONNX ops Hexir imports (domain ai.onnx, model opsets " << kMinOpset << " to " << kMaxOpset << "):\n";
  for (const OpSupport &op : supportedOps()) {
    std::string opsets = std::to_string(op.sinceOpset) + "-" + std::to_string(op.untilOpset);
    os << "  ";
    os.indent(0) << op.opType;
    os.indent(std::max<int>(1, 20 - static_cast<int>(std::strlen(op.opType)))) << "opsets " << opsets;
    if (*op.limits)
      os << "  (" << op.limits << ")";
    os << "\n";
  }
}

bool parseShape(const std::string &text, std::vector<int64_t> &shape) {
  shape.clear();
  if (text.empty())
    return false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find('x', pos);
    std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12)
      return false;
    shape.push_back(std::stoll(part));
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  return true;
}

} // namespace hexir::onnx_import

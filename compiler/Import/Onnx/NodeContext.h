//===- NodeContext.h - what an ONNX op converter sees -----------*- C++ -*-===//
//
// One converter per ONNX op type (see OpRegistry.h). A converter reads its node's attributes
// and inputs through NodeContext and sets its outputs. A value is either known at import time
// (a HostTensor: initializers and everything folded from them, such as shape arithmetic) or
// computed at run time (an SSA tensor of static shape in the graph function being built).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_NODECONTEXT_H
#define HEXIR_COMPILER_IMPORT_ONNX_NODECONTEXT_H

#include "Import/Onnx/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>

namespace hexir::onnx_import {

struct DequantizedSource;

struct OnnxValue {
  DType type = DType::kFloat;
  std::vector<int64_t> shape;
  std::optional<HostTensor> constant;  // known at import time
  mlir::Value value;                   // computed at run time
  // For a float value: the ONNX type it has where that is not float32 (FLOAT16, BFLOAT16 or
  // DOUBLE, held as f32), where known (graph inputs, initializers, Cast results); 0 otherwise.
  int32_t onnxType = 0;
  // Set on DequantizeLinear's result: the integers it dequantizes, which a consumer may
  // compute on instead (QuantizedContractions.cpp).
  std::shared_ptr<const DequantizedSource> dequantized;

  bool isConstant() const { return constant.has_value(); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  // A constant whose elements are all equal.
  bool isSplat() const;

  static OnnxValue ofConstant(HostTensor t);
  static OnnxValue ofValue(mlir::Value v, DType type);
};

// y = (q - zeroPoint) * scale, per tensor (axis -1) or along `axis`; scale and zero point as
// DequantizeLinear read them (one value, or 1-D along the axis).
struct DequantizedSource {
  OnnxValue q, scale, zeroPoint;
  int64_t axis = -1;
};

class NodeContext {
public:
  NodeContext(mlir::OpBuilder &builder, mlir::Location loc, const onnx::NodeProto &node,
              int64_t opset, std::vector<OnnxValue *> inputs)
      : b(builder), loc(loc), node_(node), opset_(opset), inputs_(std::move(inputs)) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  bool int8Kernels = false;  // OnnxImportOptions::int8Kernels

  const onnx::NodeProto &node() const { return node_; }
  int64_t opset() const { return opset_; }

  // Inputs; an omitted optional input is absent.
  size_t numInputs() const { return inputs_.size(); }
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const OnnxValue &input(size_t i) const { return *inputs_[i]; }
  size_t numOutputs() const { return node_.output_size(); }
  // Whether output `i` is named (used by the graph).
  bool hasOutput(size_t i) const { return i < numOutputs() && !node_.output(i).empty(); }
  void setOutput(size_t i, OnnxValue v);
  // For each input, the model inputs it is computed from (set by the importer; named in the
  // remedy of requireConstant's error).
  void setInputFeeders(std::vector<std::vector<std::string>> feeders) { feeders_ = std::move(feeders); }
  std::vector<OnnxValue> takeOutputs() { return std::move(outputs_); }

  // Attributes.
  const onnx::AttributeProto *attr(const std::string &name) const;
  int64_t attrInt(const std::string &name, int64_t fallback) const;
  float attrFloat(const std::string &name, float fallback) const;
  std::string attrString(const std::string &name, const std::string &fallback) const;
  std::vector<int64_t> attrInts(const std::string &name) const;
  // Axis attribute `name` normalized against `rank` (negative counts from the end), or an
  // error naming it when out of range.
  mlir::FailureOr<int64_t> axisAttr(const std::string &name, int64_t fallback, int64_t rank) const;

  // An error at this node: "node 'X' (Conv, domain ai.onnx, opset 13): ...".
  mlir::InFlightDiagnostic error() const;
  // The input's value known at import time, or an error saying it must be.
  mlir::FailureOr<HostTensor> requireConstant(size_t i, const char *what) const;
  // requireConstant for an input ONNX defines as one value (Clip's bounds, Range's start):
  // also an error, naming its shape, unless it holds exactly one element.
  mlir::FailureOr<HostTensor> requireScalar(size_t i, const char *what) const;
  // Every given input among `indices` is a float tensor (ONNX's type constraint T of ops whose
  // weights, biases and statistics share the data's type), or an error naming the first that
  // is not.
  mlir::LogicalResult requireFloatInputs(std::initializer_list<size_t> indices) const;

private:
  const onnx::NodeProto &node_;
  int64_t opset_;
  std::vector<OnnxValue *> inputs_;
  std::vector<OnnxValue> outputs_;
  std::vector<std::vector<std::string>> feeders_;
};

// ONNX's element type code -> DType; false for types the importer does not handle.
bool dtypeFromOnnx(int32_t onnxType, DType &out);
std::string onnxTypeName(int32_t onnxType);

// Reads a TensorProto (raw or typed fields; external data relative to `baseDir`).
mlir::FailureOr<HostTensor> readTensor(const onnx::TensorProto &proto, const std::string &baseDir,
                                       std::string &error);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_NODECONTEXT_H

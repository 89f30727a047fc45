//===- OnnxImporter.h - ONNX models to a Hexir graph ------------*- C++ -*-===//
//
// Reads an ONNX model (opsets 1 to 21, those below 13 raised by ONNX's version converter; external
// data beside it), fixes symbolic input dimensions from the user's --input-shape, runs ONNX shape
// inference, folds everything computable at import and builds `func.func @main` on static
// linalg/tensor IR, the same input the .mlir path takes. Errors name the node, its op type,
// domain and opset.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define HEXIR_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "Import/Onnx/FixedInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace hexir::onnx_import {

// Models of opsets kMinOpset to kFirstConvertedOpset - 1 go through ONNX's version converter to
// kFirstConvertedOpset; each op's converter states the opsets it implements from there on.
inline constexpr int64_t kMinOpset = 1;
inline constexpr int64_t kFirstConvertedOpset = 13;
inline constexpr int64_t kMaxOpset = 21;

struct OnnxImportOptions {
  std::string path;
  // The model's bytes when they are already in memory (the fuzzer); `path` then only names the
  // model in messages and locates its external data.
  const std::string *contents = nullptr;
  std::string entry = "main";
  // Shapes for inputs with symbolic or unknown dimensions, by input name.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  // Symbolic dimensions (ONNX dim_param) of the inputs fixed to a value, by name (--dim); each
  // must be one of the model's.
  std::map<std::string, int64_t> dims;
  // Inputs fixed to a value at compile time (--fix-input), by name: they become constants.
  std::map<std::string, FixedInput> fixedInputs;
  // Inputs the caller donates (--donate): the module may update them in place, as a KV cache
  // (hexir.donate; an output computed from one as its last use is tied to it).
  std::vector<std::string> donated;
  // Conv, MatMul and Gemm of a QDQ model on its int8 values (--int8-kernels, see
  // QuantizedContractions.cpp); otherwise in float32 on the dequantized copies.
  bool int8Kernels = false;
};

// Builds the graph module; null after emitting diagnostics.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  const OnnxImportOptions &options);

// The --list-ops table: each supported op with its opsets and limits.
void printSupportedOps(llvm::raw_ostream &os);

// "1x3x224x224" -> {1, 3, 224, 224}; false on malformed text.
bool parseShape(const std::string &text, std::vector<int64_t> &shape);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

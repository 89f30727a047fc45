// libFuzzer target: the ONNX importer on arbitrary model bytes (protobuf parsing, graph
// validation, size checks, constant folding, shape inference, IR construction). Any input must
// be refused with diagnostics or imported into a module that passes MLIR's verifier: an
// importer that builds invalid IR would reach the user as an internal compiler error.
// External data resolves against a folder that does not exist, so nothing outside is read.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "Import/Onnx/OnnxImporter.h"

#include "Dialect/HexirDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  mlir::MLIRContext context;
  context.loadDialect<mlir::hexir::HexirDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                      mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic&) { return mlir::success(); });
  hexir::onnx_import::OnnxImportOptions options;
  options.path = "/nonexistent-hexir-fuzz/model.onnx";
  options.contents = &bytes;
  mlir::OwningOpRef<mlir::ModuleOp> module = hexir::onnx_import::importOnnxModel(context, options);
  if (module && mlir::failed(mlir::verify(*module))) std::abort();
  return 0;
}

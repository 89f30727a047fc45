//===- ControlFlowOps.h - ONNX Loop and If ----------------------*- C++ -*-===//
//
// Loop and If carry subgraphs. A subgraph becomes a body function (marked hexir.body) that a
// hexir.loop or hexir.if runs; it reads names of the graphs around it, which become its
// captures (values known at import are folded in, not captured). An If whose condition is
// known at import is its branch, inlined.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_CONTROLFLOWOPS_H
#define HEXIR_COMPILER_IMPORT_ONNX_CONTROLFLOWOPS_H

#include "Import/Onnx/NodeContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace hexir::onnx_import {

// What the importer offers converters of ops with subgraphs.
class SubgraphImporter {
public:
  virtual ~SubgraphImporter() = default;

  struct Body {
    mlir::func::FuncOp fn;                // its arguments: the run-time formal inputs, then the captures
    std::vector<OnnxValue> outputs;       // the subgraph's outputs (constants where known at import)
    llvm::SmallVector<mlir::Value> captures;  // the enclosing graph's values the captures are bound to
  };
  // Imports `graph` as a new body function named after `kind` ("loop", "then", "else").
  // `formals` are its inputs: a constant one is bound to its value, any other becomes an
  // argument of its type and shape.
  virtual mlir::FailureOr<Body> importBody(const onnx::GraphProto &graph, const std::string &kind,
                                           const std::vector<OnnxValue> &formals) = 0;
  // Imports `graph` (no inputs) into the graph being built, at `b`; its outputs.
  virtual mlir::FailureOr<std::vector<OnnxValue>> importInline(mlir::OpBuilder &b, const onnx::GraphProto &graph) = 0;
};

mlir::LogicalResult convertLoop(NodeContext &ctx, SubgraphImporter &importer);
mlir::LogicalResult convertIf(NodeContext &ctx, SubgraphImporter &importer);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_CONTROLFLOWOPS_H

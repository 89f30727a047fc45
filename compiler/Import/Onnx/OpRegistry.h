//===- OpRegistry.h - the ONNX ops Hexir imports ----------------*- C++ -*-===//
//
// One converter per op type, grouped by kind in *Ops.cpp files. `hexir-compile --list-ops`
// prints this table; an op that is not in it is an error naming the node.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_OPREGISTRY_H
#define HEXIR_COMPILER_IMPORT_ONNX_OPREGISTRY_H

#include "Import/Onnx/NodeContext.h"

namespace hexir::onnx_import {

class SubgraphImporter;
using Converter = mlir::LogicalResult (*)(NodeContext &);
// Ops with subgraphs (Loop, If) convert with the importer's help (ControlFlowOps.h).
using SubgraphConverter = mlir::LogicalResult (*)(NodeContext &, SubgraphImporter &);

struct OpSupport {
  const char *opType;
  int64_t sinceOpset;  // within 13..21 (older models are raised to 13 first)
  int64_t untilOpset;
  Converter convert;  // null for ops with subgraphs (convertSubgraphs)
  const char *limits;      // what is not supported, "" if nothing
  const char *attributes;  // the attributes the converter reads, space-separated; any other is an error
  int minInputs;           // inputs that must be present; -1: variadic, at least one, none omitted
  SubgraphConverter convertSubgraphs = nullptr;
  // Whether it takes run-time unsigned integer inputs (uint8 to uint64): data movement, the
  // quantized ops and the converters that compute on unsigned integers as such (Div, Min,
  // comparisons, ...). The others' integer arithmetic is signed, so an unsigned input is refused
  // before it reaches them.
  bool readsUnsigned = false;
};

// Whether `op` reads attribute `name` (an unknown attribute must not be silently ignored).
bool knowsAttribute(const OpSupport &op, const std::string &name);

// Sorted by op type.
const std::vector<OpSupport> &supportedOps();
const OpSupport *findOp(const std::string &opType);

void addElementwiseOps(std::vector<OpSupport> &ops);
void addShapeOps(std::vector<OpSupport> &ops);
void addConvolutionOps(std::vector<OpSupport> &ops);
void addLinearOps(std::vector<OpSupport> &ops);
void addNormalizationOps(std::vector<OpSupport> &ops);
void addLossOps(std::vector<OpSupport> &ops);
void addGeneratorOps(std::vector<OpSupport> &ops);
void addPadTileOps(std::vector<OpSupport> &ops);
void addResizeOps(std::vector<OpSupport> &ops);
void addScatterOps(std::vector<OpSupport> &ops);
void addDataDependentOps(std::vector<OpSupport> &ops);
void addRecurrentOps(std::vector<OpSupport> &ops);
void addSignalOps(std::vector<OpSupport> &ops);
void addRegionOps(std::vector<OpSupport> &ops);
void addMathOps(std::vector<OpSupport> &ops);
void addControlFlowOps(std::vector<OpSupport> &ops);
void addQuantizeOps(std::vector<OpSupport> &ops);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_OPREGISTRY_H

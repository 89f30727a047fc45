//===- OpRegistry.cpp - the ONNX ops Hexir imports ------------------------===//
#include "Import/Onnx/OpRegistry.h"

#include <algorithm>
#include <cstring>

namespace hexir::onnx_import {

const std::vector<OpSupport> &supportedOps() {
  static const std::vector<OpSupport> ops = [] {
    std::vector<OpSupport> all;
    addElementwiseOps(all);
    addShapeOps(all);
    addConvolutionOps(all);
    addLinearOps(all);
    addNormalizationOps(all);
    addLossOps(all);
    addGeneratorOps(all);
    addPadTileOps(all);
    addResizeOps(all);
    addRegionOps(all);
    addScatterOps(all);
    addDataDependentOps(all);
    addRecurrentOps(all);
    addSignalOps(all);
    addMathOps(all);
    addControlFlowOps(all);
    addQuantizeOps(all);
    std::sort(all.begin(), all.end(),
              [](const OpSupport &a, const OpSupport &b) { return std::strcmp(a.opType, b.opType) < 0; });
    return all;
  }();
  return ops;
}

const OpSupport *findOp(const std::string &opType) {
  for (const OpSupport &op : supportedOps())
    if (opType == op.opType)
      return &op;
  return nullptr;
}

bool knowsAttribute(const OpSupport &op, const std::string &name) {
  std::string list = std::string(" ") + op.attributes + " ";
  return list.find(" " + name + " ") != std::string::npos;
}

} // namespace hexir::onnx_import

//===- VolumeOps.h - ONNX Conv and pooling in 3-D ---------------*- C++ -*-===//
//
// The rank-5 (NCDHW) forms of Conv, MaxPool and AveragePool, which ConvolutionOps.cpp's
// converters hand over (their 1-D and 2-D forms use linalg's named NCHW ops).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_VOLUMEOPS_H
#define HEXIR_COMPILER_IMPORT_ONNX_VOLUMEOPS_H

#include "Import/Onnx/NodeContext.h"

namespace hexir::onnx_import {

mlir::LogicalResult convertConv3D(NodeContext &ctx);
mlir::LogicalResult convertPool3D(NodeContext &ctx, bool isMax);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_VOLUMEOPS_H

//===- GraphValidation.h - the ONNX graph rules the importer relies on -*- C++ -*-===//
//
// ONNX's checker rejects graphs whose names are ambiguous; the importer maps names to values,
// so without these checks a duplicate would silently mean "the last one wins".
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_GRAPHVALIDATION_H
#define HEXIR_COMPILER_IMPORT_ONNX_GRAPHVALIDATION_H

#include <onnx/onnx_pb.h>

#include <string>

namespace hexir::onnx_import {

// The first violation of: unique initializer names, unique input names, every value produced
// by one node only and never by a node as well as an input or initializer, every node reading
// only values defined before it (SSA order), unique graph outputs, each computed. "" if none.
std::string validateGraph(const onnx::GraphProto &graph);

// How the importer names a node in messages: its name, or "<OpType>_<index>" if it has none.
std::string nodeName(const onnx::NodeProto &node, int index);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_GRAPHVALIDATION_H

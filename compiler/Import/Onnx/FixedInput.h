//===- FixedInput.h - an ONNX input fixed at compile time -------*- C++ -*-===//
//
// `hexir-compile --fix-input NAME=V1,V2,...` (or NAME=FILE.npy, or Python's fix_inputs): a model
// input whose value is known when compiling (a Reshape's shape, TopK's k, Pad's pads given as
// inputs). The importer makes it an initializer of the input's element type, so it folds like
// any constant, and the compiled module no longer takes it. Plain data: the driver, the tools
// and the Python module pass it without MLIR or ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_FIXEDINPUT_H
#define HEXIR_COMPILER_IMPORT_ONNX_FIXEDINPUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace hexir::onnx_import {

struct FixedInput {
  bool isFloat = false;          // which list holds the values (integers stay exact)
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool hasShape = false;         // false: the input's declared shape (a list fits rank 0 or 1 too)
  std::vector<int64_t> shape;

  size_t count() const { return isFloat ? floats.size() : ints.size(); }
};

// Parses "V1,V2,..." (integers, or numbers with a '.', 'e', inf or nan) into `value`; false
// with `error` set.
bool parseFixedValues(const std::string &text, FixedInput &value, std::string &error);

} // namespace hexir::onnx_import

#endif

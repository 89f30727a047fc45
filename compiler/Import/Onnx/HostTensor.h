//===- HostTensor.h - constant tensors the ONNX importer computes with -*- C++ -*-===//
//
// Initializers, Constant nodes and everything folded from them at import time (shape
// arithmetic: Shape -> Gather -> Concat -> Reshape, Split sizes, masks). Floating types are
// held as float, integer and bool types as int64: exact for every value a shape computation
// produces.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_HOSTTENSOR_H
#define HEXIR_COMPILER_IMPORT_ONNX_HOSTTENSOR_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hexir::onnx_import {

// ONNX TensorProto data types that the importer computes with. Integers of one width share a
// signless MLIR type (int8 and uint8 are both `i8`); the DType keeps the sign. float16, bfloat16
// and double are kFloat: computed in f32, converted where they cross the graph's interface.
enum class DType { kFloat, kInt64, kInt32, kBool, kInt8, kUInt8, kInt16, kUInt16, kUInt32, kUInt64 };

bool isFloat(DType t);
// uint8, uint16, uint32 and uint64 (not bool).
bool isUnsigned(DType t);
const char *dtypeName(DType t);
// `v` wrapped to integer type `t` (its width; unsigned types zero-extended, signed ones
// sign-extended, bool 0 or 1): the value an element of that type holds.
int64_t wrapInteger(int64_t v, DType t);

// A float or double truncated to int64 as x86's cvttss2si does (and NumPy's astype on x86): NaN
// and values out of range become INT64_MIN. A plain static_cast is undefined for them.
inline int64_t floatToInt(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
}

struct HostTensor {
  DType type = DType::kFloat;
  std::vector<int64_t> shape;
  std::vector<float> f;    // kFloat
  std::vector<int64_t> i;  // integer and bool types

  int64_t numElements() const;
  // Element `k` (row-major) as a double / an integer, whatever the type.
  double asDouble(int64_t k) const {
    return isFloat(type) ? f[k] : type == DType::kUInt64 ? static_cast<double>(static_cast<uint64_t>(i[k]))
                                                         : static_cast<double>(i[k]);
  }
  int64_t asInt(int64_t k) const { return isFloat(type) ? floatToInt(f[k]) : i[k]; }
  std::vector<int64_t> ints() const;  // all elements as integers

  static HostTensor zeros(DType type, std::vector<int64_t> shape);
  static HostTensor fromInts(std::vector<int64_t> values, std::vector<int64_t> shape, DType type = DType::kInt64);
  static HostTensor scalarFloat(float v);
};

// Folded tensors are built in memory at import: a fold whose result has more elements than
// this (512 MiB of float; integers are held as int64, 1 GiB) is an error or left to run time,
// never an out-of-memory crash. (At 2^28, a Range of int64 and its float Cast held 3 GiB: the
// importer fuzzer's 4 GiB limit under ASan caught it.)
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 27;
// The product of `shape`'s dimensions: 0 if one is 0 (in any order: an empty tensor's other
// dimensions may multiply past int64), INT64_MAX past int64. Never overflows.
int64_t elementCount(const std::vector<int64_t> &shape);
// Whether a tensor of `shape` (dimensions not negative) is small enough to fold. Never overflows.
bool foldable(const std::vector<int64_t> &shape);

// The most bytes one tensor may take (1 TiB): every size Hexir computes from a shape stays far
// from overflowing.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
// Bytes of one element of `type` in a compiled graph (bool: one byte).
int64_t elementBytes(DType type);
// Why a tensor of `shape` and `type` cannot exist in a compiled graph (a negative dimension, or
// more than kMaxTensorBytes, the numbers named), or "" if it can. Never overflows.
std::string sizeProblem(const std::vector<int64_t> &shape, DType type);

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);
std::string shapeString(const std::vector<int64_t> &shape);  // "1x3x224x224", "scalar"

// NumPy broadcasting of two shapes; false if they do not broadcast.
bool broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                     std::vector<int64_t> &out);

// Elementwise op over broadcast inputs. `fop` computes floats, `iop` integers and bools;
// the result type is `resultType`.
HostTensor foldElementwise(const std::vector<const HostTensor *> &inputs, DType resultType,
                           const std::function<double(const std::vector<double> &)> &fop,
                           const std::function<int64_t(const std::vector<int64_t> &)> &iop);

HostTensor castTo(const HostTensor &t, DType type);
HostTensor transpose(const HostTensor &t, const std::vector<int64_t> &perm);
HostTensor reshape(const HostTensor &t, std::vector<int64_t> shape);
// Elements taken along `axis` at `indices` (numpy.take).
HostTensor gather(const HostTensor &t, const HostTensor &indices, int64_t axis);
HostTensor concat(const std::vector<const HostTensor *> &inputs, int64_t axis);
// The shape of gather(t, indices, axis): t's dimensions with `axis` replaced by indices'.
std::vector<int64_t> gatheredShape(const std::vector<int64_t> &shape, const std::vector<int64_t> &indices,
                                   int64_t axis);
// Strided slice with per-axis start, count and step (steps may be negative).
HostTensor slice(const HostTensor &t, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &counts, const std::vector<int64_t> &steps);
HostTensor expand(const HostTensor &t, const std::vector<int64_t> &shape);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_HOSTTENSOR_H

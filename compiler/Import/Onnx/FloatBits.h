//===- FloatBits.h - 16-bit floats as their bits ----------------*- C++ -*-===//
//
// float16 and bfloat16 cross the graph's interface as their bits (i16) and are computed in f32
// inside it. The conversions are integer arithmetic, in kernels and at import alike: no f16 or
// bf16 type reaches a backend, so none needs a conversion library call (x86 without F16C lowers
// an f16 truncation to __truncsfhf2) or a flush-to-zero-free float path for subnormals.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_IMPORT_ONNX_FLOATBITS_H
#define HEXIR_COMPILER_IMPORT_ONNX_FLOATBITS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <cstdint>

namespace hexir::onnx_import {

// The float a float16 (or with `bf16`, bfloat16) holds: exact.
float halfToFloat(uint16_t bits, bool bf16);
// `v` rounded to the nearest float16 (bfloat16), ties to even; NaN stays NaN, past the largest
// finite value is infinity.
uint16_t floatToHalf(float v, bool bf16);
// `v` rounded to float16 (bfloat16) precision, as an f32.
inline float roundToHalf(float v, bool bf16) { return halfToFloat(floatToHalf(v, bf16), bf16); }

// Kernel-body forms of the two: an i16 of bits to f32, an f32 to i16 bits.
mlir::Value decodeHalf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bits, bool bf16);
mlir::Value encodeHalf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value f, bool bf16);

} // namespace hexir::onnx_import

#endif // HEXIR_COMPILER_IMPORT_ONNX_FLOATBITS_H

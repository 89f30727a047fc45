//===- ConstantPool.h - the constants of an executable ----------*- C++ -*-===//
//
// Dense constants are stored once in the pool (64-byte aligned, identical ones deduplicated);
// splat constants are not stored at all: each becomes a 32-byte fill descriptor and a range
// of the FilledConstant space that the runtime fills once at load. An f32 constant whose every
// value is exactly an f16 (a float16 model's weights), or else exactly a bf16, is stored as
// those 16-bit patterns (half the bytes) and widened at load into the FilledConstant space:
// the kernels read the same f32 values.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H
#define HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "serializer/executable_spec.h"

#include <map>
#include <optional>

namespace mlir::hexir {

class ConstantPool {
public:
  explicit ConstantPool(::hexir::serializer::ExecutableSpec &spec) : spec_(spec) {}

  // The slot holding `op`'s value: Constant (stored) or FilledConstant (a splat, or widened
  // from 16 bits).
  FailureOr<::hexir::serializer::Slot> add(arith::ConstantOp op);

private:
  // `bytes` (f32 values) stored narrow if every value is exactly an f16 or a bf16: its slot in
  // the FilledConstant space, or nullopt.
  std::optional<::hexir::serializer::Slot> addNarrow(const std::vector<uint8_t> &bytes);

  ::hexir::serializer::ExecutableSpec &spec_;
  std::map<std::pair<size_t, size_t>, std::vector<uint64_t>> stored_;  // (size, hash) -> offsets
  std::map<std::tuple<uint64_t, uint64_t, uint8_t>, uint64_t> filled_;  // (bytes, pattern, width)
  std::map<std::pair<size_t, size_t>, std::vector<size_t>> widened_;     // (size, hash) -> widenings
};

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H

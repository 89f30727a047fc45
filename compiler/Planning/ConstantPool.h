//===- ConstantPool.h - the constants of an executable ----------*- C++ -*-===//
//
// Dense constants are stored once in the pool (64-byte aligned, identical ones deduplicated);
// splat constants are not stored at all: each becomes a 32-byte fill descriptor and a range
// of the FilledConstant space that the runtime fills once at load.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H
#define HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "serializer/executable_spec.h"

#include <map>

namespace mlir::hexir {

class ConstantPool {
public:
  explicit ConstantPool(::hexir::serializer::ExecutableSpec &spec) : spec_(spec) {}

  // The slot holding `op`'s value: Constant (stored) or FilledConstant (a splat).
  FailureOr<::hexir::serializer::Slot> add(arith::ConstantOp op);

private:
  ::hexir::serializer::ExecutableSpec &spec_;
  std::map<std::pair<size_t, size_t>, std::vector<uint64_t>> stored_;  // (size, hash) -> offsets
  std::map<std::tuple<uint64_t, uint64_t, uint8_t>, uint64_t> filled_;  // (bytes, pattern, width)
};

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_CONSTANTPOOL_H

#include "hexir/types.h"

#include <sstream>

namespace hexir {

uint64_t ElementTypeSize(ElementType type) {
  switch (type) {
    case ElementType::kF32: return 4;
    case ElementType::kF16: return 2;
    case ElementType::kBF16: return 2;
    case ElementType::kF64: return 8;
    case ElementType::kI8: return 1;
    case ElementType::kI16: return 2;
    case ElementType::kI32: return 4;
    case ElementType::kI64: return 8;
    case ElementType::kU8: return 1;
    case ElementType::kBool: return 1;
    case ElementType::kU16: return 2;
    case ElementType::kU32: return 4;
    case ElementType::kU64: return 8;
  }
  return 0;
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kF32: return "f32";
    case ElementType::kF16: return "f16";
    case ElementType::kBF16: return "bf16";
    case ElementType::kF64: return "f64";
    case ElementType::kI8: return "i8";
    case ElementType::kI16: return "i16";
    case ElementType::kI32: return "i32";
    case ElementType::kI64: return "i64";
    case ElementType::kU8: return "u8";
    case ElementType::kBool: return "bool";
    case ElementType::kU16: return "u16";
    case ElementType::kU32: return "u32";
    case ElementType::kU64: return "u64";
  }
  return "unknown";
}

std::string DescribeTensor(ElementType type, Span<const int64_t> shape) {
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  if (shape.empty()) os << "scalar";
  os << " " << ElementTypeName(type);
  return os.str();
}

}  // namespace hexir

#include "serializer/executable_spec.h"

namespace hexir::serializer {

uint64_t ElementTypeSize(ElementType type) {
  switch (type) {
    case ElementType::F32: return 4;
    case ElementType::F16: return 2;
    case ElementType::BF16: return 2;
    case ElementType::F64: return 8;
    case ElementType::I8: return 1;
    case ElementType::I16: return 2;
    case ElementType::I32: return 4;
    case ElementType::I64: return 8;
    case ElementType::U8: return 1;
    case ElementType::BOOL: return 1;
  }
  return 0;
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::F32: return "f32";
    case ElementType::F16: return "f16";
    case ElementType::BF16: return "bf16";
    case ElementType::F64: return "f64";
    case ElementType::I8: return "i8";
    case ElementType::I16: return "i16";
    case ElementType::I32: return "i32";
    case ElementType::I64: return "i64";
    case ElementType::U8: return "u8";
    case ElementType::BOOL: return "bool";
  }
  return "unknown";
}

}  // namespace hexir::serializer

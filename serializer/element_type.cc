#include "hexir/types.h"
#include "serializer/executable_spec.h"

namespace hexir::serializer {

// The format's element types are the public ones (include/hexir/types.h), value for value.
static_assert(static_cast<int>(hexir::ElementType::kF32) == static_cast<int>(ElementType::F32) &&
                  static_cast<int>(hexir::ElementType::kBool) == static_cast<int>(ElementType::BOOL) &&
                  static_cast<int>(hexir::ElementType::kI64) == static_cast<int>(ElementType::I64) &&
                  static_cast<int>(hexir::ElementType::kU64) == static_cast<int>(ElementType::U64),
              "public element types must match the executable format");

uint64_t ElementTypeSize(ElementType type) {
  return hexir::ElementTypeSize(static_cast<hexir::ElementType>(type));
}

const char* ElementTypeName(ElementType type) {
  return hexir::ElementTypeName(static_cast<hexir::ElementType>(type));
}

}  // namespace hexir::serializer

// Element types, tensor descriptions and the tensor views a caller binds to a Session.
// Views do not own memory. Thread safety: values.
#pragma once

#include "hexir/export.h"
#include <cstdint>
#include <string>
#include <vector>

#include "hexir/span.h"

namespace hexir {

// Values match the executable format's element types.
enum class ElementType : uint8_t { kF32 = 0, kF16, kBF16, kF64, kI8, kI16, kI32, kI64, kU8, kBool };

// Bytes per element (0 for an unknown value).
HEXIR_API uint64_t ElementTypeSize(ElementType type);
// "f32", "i64", ...
HEXIR_API const char* ElementTypeName(ElementType type);

// A function input or output as the module declares it.
struct TensorInfo {
  std::string name;
  ElementType element_type = ElementType::kF32;
  std::vector<int64_t> shape;
  uint64_t byte_size = 0;
  bool donated = false;  // inputs: the module may update this buffer in place
  int tied_input = -1;   // outputs: may share the buffer of this donated input (in place)
};

// A caller's input: read, never written (unless the module declares the input donated).
struct TensorView {
  const void* data = nullptr;
  ElementType element_type = ElementType::kF32;
  Span<const int64_t> shape;
};

// A caller's output buffer: the module writes the result into it.
struct MutableTensorView {
  void* data = nullptr;
  ElementType element_type = ElementType::kF32;
  Span<const int64_t> shape;
};

// "1x3x224x224 f32"
HEXIR_API std::string DescribeTensor(ElementType type, Span<const int64_t> shape);

}  // namespace hexir

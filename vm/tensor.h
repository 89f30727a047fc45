// Tensor views the caller binds to a Session: a pointer, an element type and a shape. Views
// do not own memory. Thread safety: values.
#pragma once

#include <cstdint>
#include <string>

#include "base/span.h"
#include "serializer/executable_generated.h"

namespace hexir {

using ElementType = serializer::fb::ElementType;

struct TensorView {
  const void* data = nullptr;
  ElementType element_type = ElementType::F32;
  Span<const int64_t> shape;
};

struct MutableTensorView {
  void* data = nullptr;
  ElementType element_type = ElementType::F32;
  Span<const int64_t> shape;
};

// "1x3x224x224 f32"
std::string DescribeTensor(ElementType type, Span<const int64_t> shape);

}  // namespace hexir

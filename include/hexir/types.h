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
enum class ElementType : uint8_t { kF32 = 0, kF16, kBF16, kF64, kI8, kI16, kI32, kI64, kU8, kBool, kU16, kU32, kU64 };

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

// Where a view's bytes are. kHost: process memory (a GPU session copies it in and out
// through its staging). kDevice: memory of the session's device that the caller already holds
// (on CUDA a CUdeviceptr from cuMemAlloc, cast to a pointer; on the host device, process
// memory): kernels read and write it directly, with no copy. The caller's own work on it must
// be complete before Run (synchronize your stream first), and it must stay valid until Run
// returns; it must be aligned to its element size.
enum class MemoryLocation : uint8_t { kHost = 0, kDevice };

// A caller's input: read, never written (unless the module declares the input donated).
struct TensorView {
  const void* data = nullptr;
  ElementType element_type = ElementType::kF32;
  Span<const int64_t> shape;
  MemoryLocation location = MemoryLocation::kHost;
};

// A caller's output buffer: the module writes the result into it.
struct MutableTensorView {
  void* data = nullptr;
  ElementType element_type = ElementType::kF32;
  Span<const int64_t> shape;
  MemoryLocation location = MemoryLocation::kHost;
};

// "1x3x224x224 f32"
HEXIR_API std::string DescribeTensor(ElementType type, Span<const int64_t> shape);

}  // namespace hexir

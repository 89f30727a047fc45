// Reading and writing NumPy .npy files (format versions 1.0-3.0, C order, little-endian).
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hexir/status.h"
#include "hexir/types.h"

#include <utility>
#include <vector>

namespace hexir::npy {

struct Array {
  ElementType element_type = ElementType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint64_t> storage;  // 8-byte aligned bytes
  uint64_t byte_size = 0;

  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  uint64_t element_count() const;
  void Resize(uint64_t bytes);
};

// INVALID_ARGUMENT names the file and what is wrong (Fortran order, big-endian, unknown dtype).
StatusOr<Array> Read(const std::string& path);
StatusOr<Array> Parse(const std::string& bytes, const std::string& what);
Status Write(const std::string& path, const Array& array);
// Writes every (path, array) or none: each goes to a temporary file next to its path first, and
// only when all are written are they renamed into place.
Status WriteAll(const std::vector<std::pair<std::string, const Array*>>& files);
// A bf16 array is written as float32 (NumPy has no bfloat16; every bf16 value is a float32).
std::string Serialize(const Array& array);

// bfloat16 bits and floats: exact one way, rounded to nearest (ties to even) the other.
float Bf16ToFloat(uint16_t bits);
uint16_t FloatToBf16(float f);
// `array` made an input of `type` where NumPy cannot hold that type: a bf16 input from float32
// values (rounded to nearest even) or from uint16/int16 bits. Anything else is left as it is
// (the session then checks the type).
void AdaptToInput(Array& array, ElementType type);

}  // namespace hexir::npy

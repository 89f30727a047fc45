// libFuzzer target: the .npy reader hexir-run reads its inputs with. Whatever it accepts has
// a shape whose bytes it holds; nothing it is given may crash it.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto array = hexir::npy::Parse(bytes, "fuzz");
  if (!array.ok()) return 0;
  if (array->byte_size != array->element_count() * hexir::ElementTypeSize(array->element_type) &&
      array->element_count() != 0)
    std::abort();
  // What it read, written and read again, is the same array.
  auto again = hexir::npy::Parse(hexir::npy::Serialize(*array), "again");
  if (!again.ok() || again->shape != array->shape || again->element_type != array->element_type) std::abort();
  return 0;
}

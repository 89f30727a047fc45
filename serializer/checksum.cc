#include <xxhash.h>

#include "serializer/file_format.h"

namespace hexir::serializer {

uint64_t Checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace hexir::serializer

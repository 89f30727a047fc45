// Lays out an ExecutableSpec as a .hxb file: header, flatbuffer metadata, aligned sections.
// Deterministic: the same spec always gives the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "serializer/executable_spec.h"

namespace hexir::serializer {

std::vector<uint8_t> WriteExecutable(const ExecutableSpec& spec);

}  // namespace hexir::serializer

// A small executable for VM tests, built with the serializer and the hand-written kernels of
// hal/host/test_kernels.c, so the VM is tested without the compiler:
//   t = x + (-1) -> output 1; a = relu(t) -> arena[0, 32); arena[32, 64) = 2 (FILL);
//   arena[32, 64) += a (in place, alias bit); y = arena[32, 64) + 3 (a filled constant).
#pragma once

#include <string>
#include <vector>

#include "serializer/executable_spec.h"

namespace hexir::testing {

serializer::ExecutableSpec TestExecutableSpec(const std::string& kernel_library_path);
// Writes it to a fresh file under /tmp and returns the path.
std::string WriteTestExecutable(const std::string& kernel_library_path, const std::string& tag);

}  // namespace hexir::testing

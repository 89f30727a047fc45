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

// Control flow over the same kernels. Function "main": inputs x (8 f32), n (i64 scalar), c
// (bool scalar); outputs y (8 f32), rows (4x8 f32), last (i64 scalar):
//   acc = x; last = -1
//   LOOP at most 4 trips, n of them, the trip number into `last`: { acc += -1; rows[trip] = acc }
//   IF c: y = relu(acc) ELSE y = acc
// Function "once" (x -> y): a LOOP while a flag its body clears: y = x - 1.
// Function "nested" (x -> y, rows 2x8): 2 trips of { 3 trips of { acc += -1 }; rows[trip] = acc }.
serializer::ExecutableSpec ControlFlowExecutableSpec(const std::string& kernel_library_path);
// Writes `spec` to a fresh file under /tmp and returns the path ("" on failure).
std::string WriteSpec(const serializer::ExecutableSpec& spec, const std::string& tag);

}  // namespace hexir::testing

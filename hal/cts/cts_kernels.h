// What each backend gives the conformance suite: a kernel library in its format holding
//   test_add8(a, b, out): out[i] = a[i] + b[i] over 8 floats, one workgroup;
//   test_relu8(x, out):   out[i] = max(x[i], 0) over 8 floats, one workgroup.
// A new backend adds its format here (CUDA: the same kernels as PTX).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hexir/status.h"
#include "hal/executable.h"

namespace hexir::hal::cts {

struct TestKernels {
  ExecutableFormat format;
  std::vector<unsigned char> code;
  std::array<uint32_t, 3> workgroup_size;  // of both kernels
};

// The test kernels a device named `device_name` runs; NOT_FOUND for a backend without any.
StatusOr<TestKernels> TestKernelsFor(const std::string& device_name);

}  // namespace hexir::hal::cts

#include "hal/cts/cts_kernels.h"

#include <cstdlib>

#include "base/file_mapping.h"

namespace hexir::hal::cts {
namespace {

// The kernels' files: where the build put them, or where HEXIR_TEST_KERNELS /
// HEXIR_CUDA_TEST_KERNELS say (the suite carried to another machine, scripts/device-check.sh).
std::string PathOf(const char* variable, const char* built) {
  const char* given = std::getenv(variable);
  return given != nullptr && *given != '\0' ? given : built;
}

}  // namespace

StatusOr<TestKernels> TestKernelsFor(const std::string& device_name) {
  if (device_name == "host") {
    HEXIR_ASSIGN_OR_RETURN(std::string elf, ReadFileToString(PathOf("HEXIR_TEST_KERNELS", HEXIR_TEST_KERNELS_PATH)));
    return TestKernels{ExecutableFormat::kHostElf, std::vector<unsigned char>(elf.begin(), elf.end()), {1, 1, 1}};
  }
  if (device_name.rfind("cuda", 0) == 0) {
    HEXIR_ASSIGN_OR_RETURN(std::string ptx, ReadFileToString(PathOf("HEXIR_CUDA_TEST_KERNELS", HEXIR_CUDA_TEST_KERNELS_PATH)));
    return TestKernels{ExecutableFormat::kCudaPtx, std::vector<unsigned char>(ptx.begin(), ptx.end()), {8, 1, 1}};
  }
  return NotFoundError("no conformance kernels for device '", device_name, "'");
}

}  // namespace hexir::hal::cts

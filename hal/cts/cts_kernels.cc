#include "hal/cts/cts_kernels.h"

#include "base/file_mapping.h"

namespace hexir::hal::cts {

StatusOr<TestKernels> TestKernelsFor(const std::string& device_name) {
  if (device_name == "host") {
    HEXIR_ASSIGN_OR_RETURN(std::string elf, ReadFileToString(HEXIR_TEST_KERNELS_PATH));
    return TestKernels{ExecutableFormat::kHostElf, std::vector<unsigned char>(elf.begin(), elf.end())};
  }
  return NotFoundError("no conformance kernels for device '", device_name, "'");
}

}  // namespace hexir::hal::cts

#include "hal/executable.h"

namespace hexir::hal {

const char* ExecutableFormatName(ExecutableFormat format) {
  switch (format) {
    case ExecutableFormat::kHostElf: return "host ELF";
    case ExecutableFormat::kCudaPtx: return "CUDA PTX";
  }
  return "an unknown format";
}

}  // namespace hexir::hal

// Whether this CPU has an instruction-set extension a host kernel library was compiled for.
// Loading kernels built for extensions the CPU lacks would crash on the first such
// instruction; the VM checks first and refuses with a message instead.
#pragma once

#include <string>

namespace hexir::hal {

// True for the extensions this CPU supports; false for unsupported or unknown names. The
// names are LLVM's ("avx2", "avx512f", ...), the list the compiler records.
bool HostCpuSupports(const std::string& feature);

}  // namespace hexir::hal

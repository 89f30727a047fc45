// What hexir-dump shows of a PTX kernel library: per entry, the shared memory it declares and
// the local memory (per-thread stack frame) it uses, read from the PTX text.
#ifndef HEXIR_TOOLS_PTX_INFO_H_
#define HEXIR_TOOLS_PTX_INFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace hexir::tools {

struct PtxEntryInfo {
  uint64_t shared_bytes = 0;  // .shared declarations inside the entry
  uint64_t local_bytes = 0;   // .local declarations (the thread's frame, __local_depot)
};

// Entry name -> its memory, for every `.entry` of `ptx`.
std::map<std::string, PtxEntryInfo> ParsePtxEntries(std::string_view ptx);

}  // namespace hexir::tools

#endif  // HEXIR_TOOLS_PTX_INFO_H_

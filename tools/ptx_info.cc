#include "tools/ptx_info.h"

#include <cstdlib>

namespace hexir::tools {
namespace {

// The byte count of a declaration such as `.shared .align 16 .b8 tile[4096];` (`[N]` times the
// width of `.bN`/`.fN`/`.uN`/`.sN` elements; one element without brackets).
uint64_t DeclaredBytes(std::string_view line) {
  uint64_t width = 1;
  for (std::string_view type : {".b", ".f", ".u", ".s"}) {
    for (size_t at = line.find(type); at != std::string_view::npos; at = line.find(type, at + 1)) {
      size_t digits = at + 2;
      if (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') {
        width = std::strtoull(std::string(line.substr(digits, 3)).c_str(), nullptr, 10) / 8;
        break;
      }
    }
  }
  uint64_t count = 1;
  size_t open = line.find('['), close = line.find(']');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open + 1)
    count = std::strtoull(std::string(line.substr(open + 1, close - open - 1)).c_str(), nullptr, 10);
  return count * (width ? width : 1);
}

}  // namespace

std::map<std::string, PtxEntryInfo> ParsePtxEntries(std::string_view ptx) {
  std::map<std::string, PtxEntryInfo> entries;
  PtxEntryInfo* current = nullptr;
  size_t begin = 0;
  while (begin < ptx.size()) {
    size_t end = ptx.find('\n', begin);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(begin, end - begin);
    begin = end + 1;
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line = line.substr(first);
    size_t entry = line.find(".entry ");
    if (entry != std::string_view::npos) {
      std::string_view rest = line.substr(entry + 7);
      std::string name(rest.substr(0, rest.find_first_of("( \t")));
      current = &entries[name];
      continue;
    }
    if (!current) continue;
    if (line.rfind(".shared", 0) == 0 || line.find(" .shared ") != std::string_view::npos)
      current->shared_bytes += DeclaredBytes(line);
    else if (line.rfind(".local", 0) == 0)
      current->local_bytes += DeclaredBytes(line);
  }
  return entries;
}

}  // namespace hexir::tools

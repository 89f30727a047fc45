#include "planner/csv.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace hexir::planner {
namespace {

std::vector<std::string> SplitRow(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream is(line);
  while (std::getline(is, cell, ',')) {
    size_t a = cell.find_first_not_of(" \t\r");
    size_t b = cell.find_last_not_of(" \t\r");
    out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

bool ParseInt(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *value = v;
  return true;
}

}  // namespace

StatusOr<Problem> ParseMiniMallocCsv(const std::string& text) {
  std::istringstream is(text);
  std::string line;
  size_t line_no = 0;
  int col_id = -1, col_lower = -1, col_upper = -1, col_size = -1;
  size_t columns = 0;
  Problem problem;
  while (std::getline(is, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<std::string> cells = SplitRow(line);
    if (col_id < 0) {
      for (size_t c = 0; c < cells.size(); ++c) {
        if (cells[c] == "id") col_id = static_cast<int>(c);
        else if (cells[c] == "lower") col_lower = static_cast<int>(c);
        else if (cells[c] == "upper") col_upper = static_cast<int>(c);
        else if (cells[c] == "size") col_size = static_cast<int>(c);
      }
      if (col_id < 0 || col_lower < 0 || col_upper < 0 || col_size < 0)
        return InvalidArgumentError("line ", line_no, ": the header must name the columns id, lower, upper ",
                                    "and size; got '", line, "'");
      columns = cells.size();
      continue;
    }
    if (cells.size() != columns)
      return InvalidArgumentError("line ", line_no, ": expected ", columns, " fields, got ", cells.size());
    int64_t lower, upper, size;
    if (!ParseInt(cells[col_lower], &lower) || !ParseInt(cells[col_upper], &upper) ||
        !ParseInt(cells[col_size], &size))
      return InvalidArgumentError("line ", line_no, ": lower, upper and size must be integers: '", line, "'");
    if (lower < 0 || size < 0)
      return InvalidArgumentError("line ", line_no, ": negative lower or size in '", line, "'");
    if (upper <= lower)
      return InvalidArgumentError("line ", line_no, ": buffer '", cells[col_id], "' has an empty lifetime [",
                                  lower, ", ", upper, ")");
    BufferRequest b;
    b.name = cells[col_id];
    b.first = lower;
    b.last = upper - 1;
    b.size = static_cast<uint64_t>(size);
    problem.buffers.push_back(b);
  }
  if (col_id < 0) return InvalidArgumentError("empty input: no header line");
  return problem;
}

std::string FormatSolutionCsv(const Problem& problem, const Plan& plan) {
  std::ostringstream os;
  os << "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const BufferRequest& b = problem.buffers[i];
    os << b.name << ',' << b.first << ',' << b.last + 1 << ',' << b.size << ',' << plan.offsets[i] << '\n';
  }
  return os.str();
}

}  // namespace hexir::planner

#include "base/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace hexir::cli {

bool ParseInteger(const char* text, int64_t min, int64_t max, int64_t* out) {
  // (strtoll would also take leading spaces and a '+'.)
  if (text == nullptr || !((*text >= '0' && *text <= '9') || *text == '-')) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < min || v > max) return false;
  *out = v;
  return true;
}

bool ParseSeconds(const char* text, double max, double* out) {
  if (text == nullptr || !((*text >= '0' && *text <= '9') || *text == '.')) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace hexir::cli

// Numbers on command lines (the tools, hexir-serve): decimal, fully consumed, range-checked (no
// wrapping of "-1" into a huge count, no "2abc" read as 2, no NaN or infinite seconds).
#pragma once

#include <cstdint>

namespace hexir::cli {

// An integer from `min` to `max`.
bool ParseInteger(const char* text, int64_t min, int64_t max, int64_t* out);
// A finite number of seconds from 0 to `max`.
bool ParseSeconds(const char* text, double max, double* out);

}  // namespace hexir::cli

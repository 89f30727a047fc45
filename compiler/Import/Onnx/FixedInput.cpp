//===- FixedInput.cpp - parsing --fix-input values ------------------------===//
#include "Import/Onnx/FixedInput.h"

#include <cerrno>
#include <cstdlib>

namespace hexir::onnx_import {

bool parseFixedValues(const std::string &text, FixedInput &value, std::string &error) {
  value = FixedInput();
  if (text.empty()) {
    error = "no values";
    return false;
  }
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  // Integers unless any value is written as a float.
  for (const std::string &item : items)
    if (item.find_first_of(".eEnN") != std::string::npos && item.rfind("0x", 0) != 0)
      value.isFloat = true;
  for (const std::string &item : items) {
    const char *begin = item.c_str();
    char *end = nullptr;
    errno = 0;
    if (value.isFloat) {
      double v = std::strtod(begin, &end);
      if (item.empty() || *end != '\0' || errno == ERANGE) {
        error = "'" + item + "' is not a number";
        return false;
      }
      value.floats.push_back(v);
    } else {
      long long v = std::strtoll(begin, &end, 10);
      if (item.empty() || *end != '\0' || errno == ERANGE) {
        error = "'" + item + "' is not a 64-bit integer";
        return false;
      }
      value.ints.push_back(v);
    }
  }
  return true;
}

} // namespace hexir::onnx_import

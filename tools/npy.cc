#include "tools/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/file_mapping.h"
#include "base/half.h"

namespace hexir::npy {
namespace {

struct DtypeName {
  const char* descr;
  ElementType type;
};
constexpr DtypeName kDtypes[] = {
    {"<f4", ElementType::kF32}, {"<f2", ElementType::kF16}, {"<f8", ElementType::kF64},
    {"|i1", ElementType::kI8},  {"<i2", ElementType::kI16}, {"<i4", ElementType::kI32},
    {"<i8", ElementType::kI64}, {"|u1", ElementType::kU8},  {"|b1", ElementType::kBool},
    {"<u2", ElementType::kU16}, {"<u4", ElementType::kU32}, {"<u8", ElementType::kU64},
};

// Value text of `key` in the header dict: "'descr': '<f4'" -> "'<f4'".
bool FindValue(const std::string& header, const std::string& key, std::string* value) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return false;
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return false;
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) return false;
    ++end;
  } else {
    end = header.find_first_of(",}", start);
    if (end == std::string::npos) return false;
  }
  *value = header.substr(start, end - start);
  while (!value->empty() && value->back() == ' ') value->pop_back();
  return true;
}

}  // namespace

uint64_t Array::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

void Array::Resize(uint64_t bytes) {
  byte_size = bytes;
  storage.assign((bytes + 7) / 8, 0);
}

StatusOr<Array> Parse(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return InvalidArgumentError(what, ": not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  uint64_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return InvalidArgumentError(what, ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= uint64_t{static_cast<uint8_t>(bytes[8 + i])} << (8 * i);
    header_start = 12;
  } else {
    return InvalidArgumentError(what, ": unsupported .npy version ", int{major});
  }
  if (header_start + header_len > bytes.size()) return InvalidArgumentError(what, ": truncated .npy header");
  std::string header = bytes.substr(header_start, header_len);
  std::string descr, fortran, shape_text;
  if (!FindValue(header, "descr", &descr) || !FindValue(header, "fortran_order", &fortran) ||
      !FindValue(header, "shape", &shape_text))
    return InvalidArgumentError(what, ": malformed .npy header: ", header);
  if (fortran != "False")
    return InvalidArgumentError(what, ": Fortran-order arrays are not supported; save with np.ascontiguousarray");
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"') || descr.back() != descr.front())
    return InvalidArgumentError(what, ": malformed dtype ", descr);
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')')
    return InvalidArgumentError(what, ": malformed shape '", shape_text, "' (a tuple such as (2, 3) is expected)");
  descr = descr.substr(1, descr.size() - 2);
  Array array;
  bool known = false;
  for (const DtypeName& d : kDtypes) {
    if (descr == d.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(d.descr).substr(1))) {
      array.element_type = d.type;
      known = true;
    }
  }
  if (!known) return InvalidArgumentError(what, ": unsupported dtype '", descr, "'");
  // shape: "(2, 3)" or "(5,)" or "()"
  std::string dims = shape_text.substr(1, shape_text.size() - 2);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string tok = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t first = tok.find_first_not_of(' ');
    if (first != std::string::npos) {
      tok = tok.substr(first, tok.find_last_not_of(' ') - first + 1);
      // Digits only (no "2**3" read as 2, no sign), within 64 bits.
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(tok.c_str(), &end, 10);
      if (tok.find_first_not_of("0123456789") != std::string::npos || *end != '\0' || errno == ERANGE)
        return InvalidArgumentError(what, ": malformed shape ", shape_text);
      array.shape.push_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  // The byte size without wrapping (a shape of 2^32 x 2^32 is not 0 bytes).
  uint64_t bytes_needed = ElementTypeSize(array.element_type);
  bool empty = false, too_large = false;
  for (int64_t d : array.shape) {
    empty |= d == 0;
    too_large |= d != 0 && __builtin_mul_overflow(bytes_needed, static_cast<uint64_t>(d), &bytes_needed);
  }
  if (too_large)
    return InvalidArgumentError(what, ": shape ", shape_text, " has more than 2^64 bytes");
  if (empty) bytes_needed = 0;
  uint64_t data_start = header_start + header_len;
  if (bytes.size() - data_start != bytes_needed)
    return InvalidArgumentError(what, ": holds ", bytes.size() - data_start, " data bytes, its header says ",
                                bytes_needed);
  array.Resize(bytes_needed);
  if (bytes_needed > 0) std::memcpy(array.data(), bytes.data() + data_start, bytes_needed);  // (an empty array has no storage)
  return array;
}

StatusOr<Array> Read(const std::string& path) {
  HEXIR_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return Parse(bytes, "'" + path + "'");
}

float Bf16ToFloat(uint16_t bits) { return Bf16BitsToFloat(bits); }

uint16_t FloatToBf16(float f) { return FloatToBf16Bits(f); }

static Array Bf16AsFloat(const Array& array) {
  Array f;
  f.element_type = ElementType::kF32;
  f.shape = array.shape;
  uint64_t n = array.element_count();
  f.Resize(n * 4);
  const uint16_t* in = static_cast<const uint16_t*>(array.data());
  float* out = static_cast<float*>(f.data());
  for (uint64_t i = 0; i < n; ++i) out[i] = Bf16ToFloat(in[i]);
  return f;
}

std::string Serialize(const Array& array) {
  // NumPy has no bfloat16: such an array is written as the float32 values it holds (exact).
  if (array.element_type == ElementType::kBF16) return Serialize(Bf16AsFloat(array));
  const char* descr = "<f4";
  for (const DtypeName& d : kDtypes)
    if (d.type == array.element_type) descr = d.descr;
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) shape += std::to_string(array.shape[i]) + (array.shape.size() == 1 ? "," : (i + 1 < array.shape.size() ? ", " : ""));
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts 64-byte aligned; the header ends with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (array.byte_size > 0) out.append(static_cast<const char*>(array.data()), array.byte_size);
  return out;
}

void AdaptToInput(Array& array, ElementType type) {
  if (type != ElementType::kBF16) return;
  if (array.element_type == ElementType::kU16 || array.element_type == ElementType::kI16) {
    array.element_type = ElementType::kBF16;
  } else if (array.element_type == ElementType::kF32) {
    uint64_t n = array.element_count();
    Array bits;
    bits.element_type = ElementType::kBF16;
    bits.shape = array.shape;
    bits.Resize(n * 2);
    const float* in = static_cast<const float*>(array.data());
    uint16_t* out = static_cast<uint16_t*>(bits.data());
    for (uint64_t i = 0; i < n; ++i) out[i] = FloatToBf16(in[i]);
    array = std::move(bits);
  }
}

Status Write(const std::string& path, const Array& array) {
  std::string bytes = Serialize(array);
  return WriteFileAtomically(path, bytes.data(), bytes.size());
}

Status WriteAll(const std::vector<std::pair<std::string, const Array*>>& files) {
  std::vector<std::pair<std::string, std::string>> bytes;
  for (const auto& [path, array] : files) bytes.emplace_back(path, Serialize(*array));
  return WriteFilesAtomically(bytes);
}

}  // namespace hexir::npy

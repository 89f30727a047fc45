#include "tools/npy.h"

#include <catch2/catch.hpp>
#include <cstring>

namespace hexir::npy {
namespace {

// Bytes of np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)) as numpy 1.24 writes them.
std::string NumpyBytes() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size());
  out += '\0';
  out += header;
  for (int i = 0; i < 6; ++i) {
    float f = static_cast<float>(i);
    out.append(reinterpret_cast<const char*>(&f), 4);
  }
  return out;
}

TEST_CASE("npy round trip", "[npy]") {
  auto a = Parse(NumpyBytes(), "test");
  REQUIRE(a.ok());
  CHECK(a->element_type == ElementType::kF32);
  CHECK(a->shape == std::vector<int64_t>{2, 3});
  CHECK(static_cast<const float*>(a->data())[5] == 5.0f);
  std::string again = Serialize(*a);
  CHECK((again.size() - a->byte_size) % 64 == 0);
  auto b = Parse(again, "again");
  REQUIRE(b.ok());
  CHECK(b->shape == a->shape);
  CHECK(std::memcmp(b->data(), a->data(), 24) == 0);
  Array v;
  v.shape = {5};
  v.Resize(20);
  auto c = Parse(Serialize(v), "vector");
  REQUIRE(c.ok());
  CHECK(c->shape == std::vector<int64_t>{5});
}

TEST_CASE("npy errors name the problem", "[npy]") {
  CHECK(Parse("garbage", "g").status().message() == "g: not a .npy file (bad magic)");
  std::string bad = NumpyBytes();
  bad.pop_back();
  CHECK(Parse(bad, "t").status().message() == "t: holds 23 data bytes, its header says 24");
  std::string fortran = NumpyBytes();
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK(Parse(fortran, "t").status().message().find("Fortran-order") != std::string::npos);
  std::string big = NumpyBytes();
  big.replace(big.find("<f4"), 3, ">f4");
  CHECK(Parse(big, "t").status().message() == "t: unsupported dtype '>f4'");
}

// A shape replaced in the header, whose length stays the same (padding spaces absorb the
// difference); the data is unchanged.
std::string WithShape(const std::string& shape) {
  std::string bytes = NumpyBytes();
  const std::string text = "(2, 3)";
  size_t at = bytes.find(text);
  bytes.replace(at, text.size(), shape);
  size_t newline = bytes.find('\n', at);
  if (shape.size() > text.size())
    bytes.erase(newline - (shape.size() - text.size()), shape.size() - text.size());
  else
    bytes.insert(newline, text.size() - shape.size(), ' ');
  return bytes;
}

TEST_CASE("npy shapes are parsed strictly and sized without wrapping", "[npy]") {
  // 2^32 x 2^32 floats would wrap to 0 bytes.
  CHECK(Parse(WithShape("(4294967296, 4294967296)"), "t").status().message() ==
        "t: shape (4294967296, 4294967296) has more than 2^64 bytes");
  CHECK(Parse(WithShape("(99999999999999999999999,)"), "t").status().message() ==
        "t: malformed shape (99999999999999999999999,)");
  CHECK(Parse(WithShape("(2**3,)"), "t").status().message() == "t: malformed shape (2**3,)");
  CHECK(Parse(WithShape("(-6,)"), "t").status().message() == "t: malformed shape (-6,)");
  // No tuple at all (a header with "'shape': ," aborted hexir-run with an uncaught exception).
  for (const char* shape : {"", " ", "6", "(6", "6)"}) {
    CAPTURE(shape);
    CHECK(Parse(WithShape(shape), "t").status().message().find("t: malformed") == 0);
  }
  auto six = Parse(WithShape("( 6 ,)"), "t");
  REQUIRE(six.ok());
  CHECK(six->shape == std::vector<int64_t>{6});
}

TEST_CASE("npy holds unsigned 16 to 64-bit integers, and bf16 goes out as float32 and comes in from it", "[npy]") {
  for (auto [type, descr] : {std::pair{ElementType::kU16, "<u2"}, std::pair{ElementType::kU32, "<u4"},
                             std::pair{ElementType::kU64, "<u8"}}) {
    Array a;
    a.element_type = type;
    a.shape = {3};
    a.Resize(3 * ElementTypeSize(type));
    std::memset(a.data(), 0xff, a.byte_size);
    std::string bytes = Serialize(a);
    CHECK(bytes.find(std::string("'descr': '") + descr + "'") != std::string::npos);
    auto back = Parse(bytes, "t");
    REQUIRE(back.ok());
    CHECK(back->element_type == type);
    CHECK(std::memcmp(back->data(), a.data(), a.byte_size) == 0);
  }
  // bfloat16 1.0 (0x3f80) and -2.5 (0xc020) are written as the float32 values they hold.
  Array h;
  h.element_type = ElementType::kBF16;
  h.shape = {2};
  h.Resize(4);
  uint16_t bits[2] = {0x3f80, 0xc020};
  std::memcpy(h.data(), bits, 4);
  auto f = Parse(Serialize(h), "t");
  REQUIRE(f.ok());
  CHECK(f->element_type == ElementType::kF32);
  CHECK(static_cast<const float*>(f->data())[0] == 1.0f);
  CHECK(static_cast<const float*>(f->data())[1] == -2.5f);
  // ... and float32 values become a bf16 input, rounded to nearest even.
  float in[2] = {1.0f, 1.00390625f};  // 1 + 2^-8: a tie between 1 and 1 + 2^-7, to the even 1
  Array g;
  g.element_type = ElementType::kF32;
  g.shape = {2};
  g.Resize(8);
  std::memcpy(g.data(), in, 8);
  AdaptToInput(g, ElementType::kBF16);
  CHECK(g.element_type == ElementType::kBF16);
  CHECK(static_cast<const uint16_t*>(g.data())[0] == 0x3f80);
  CHECK(static_cast<const uint16_t*>(g.data())[1] == 0x3f80);
  AdaptToInput(g, ElementType::kF32);  // anything but bf16 is left to the session's checks
  CHECK(g.element_type == ElementType::kBF16);
}

}  // namespace
}  // namespace hexir::npy

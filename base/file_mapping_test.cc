#include "base/file_mapping.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace hexir {
namespace {

TEST_CASE("FileMapping maps what WriteFileAtomically wrote", "[base]") {
  std::string path = "/tmp/hexir_file_mapping_test." + std::to_string(::getpid());
  const char text[] = "hello hexir";
  REQUIRE(WriteFileAtomically(path, text, sizeof(text)).ok());
  auto mapping = FileMapping::Open(path);
  REQUIRE(mapping.ok());
  REQUIRE((*mapping)->bytes().size() == sizeof(text));
  CHECK(std::memcmp((*mapping)->bytes().data(), text, sizeof(text)) == 0);
  auto contents = ReadFileToString(path);
  REQUIRE(contents.ok());
  CHECK(contents->size() == sizeof(text));
  std::remove(path.c_str());
}

TEST_CASE("FileMapping reports a missing file", "[base]") {
  auto mapping = FileMapping::Open("/nonexistent/hexir/file.hxb");
  REQUIRE_FALSE(mapping.ok());
  CHECK(mapping.status().code() == StatusCode::kNotFound);
  CHECK(mapping.status().message().find("/nonexistent/hexir/file.hxb") != std::string::npos);
}

}  // namespace
}  // namespace hexir

#include "hal/host/host_device.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "base/file_mapping.h"

namespace hexir::hal {
namespace {

TEST_CASE("host device loads a kernel library from memory and dispatches", "[hal]") {
  auto device = CreateHostDevice();
  auto elf = ReadFileToString(HEXIR_TEST_KERNELS_PATH);
  REQUIRE(elf.ok());
  ByteSpan code(reinterpret_cast<const unsigned char*>(elf->data()), elf->size());
  auto exe = device->LoadExecutable(ExecutableFormat::kHostElf, code, {"test_add8", "test_relu8"});
  REQUIRE(exe.ok());
  CHECK((*exe)->entry_count() == 2);

  auto buf = device->Allocate(3 * 8 * sizeof(float), 64);
  REQUIRE(buf.ok());
  float* f = static_cast<float*>(*buf);
  for (int i = 0; i < 8; ++i) {
    f[i] = static_cast<float>(i) - 4.0f;
    f[8 + i] = 0.5f;
  }
  DevicePtr bind[3] = {f, f + 8, f + 16};
  REQUIRE(device->Dispatch(**exe, 0, {}, Span<const DevicePtr>(bind, 3)).ok());
  for (int i = 0; i < 8; ++i) CHECK(f[16 + i] == static_cast<float>(i) - 3.5f);
  DevicePtr bind2[2] = {f + 16, f};
  REQUIRE(device->Dispatch(**exe, 1, {}, Span<const DevicePtr>(bind2, 2)).ok());
  for (int i = 0; i < 8; ++i) CHECK(f[i] == (i < 4 ? 0.0f : static_cast<float>(i) - 3.5f));

  REQUIRE(device->Fill(f, 32, 0x3f800000, 4).ok());
  for (int i = 0; i < 8; ++i) CHECK(f[i] == 1.0f);
  device->Free(*buf, 3 * 8 * sizeof(float));
  CHECK(device->live_buffers() == 0);
}

TEST_CASE("host device refuses bad kernel libraries", "[hal]") {
  auto device = CreateHostDevice();
  std::vector<unsigned char> junk(128, 0x42);
  auto exe = device->LoadExecutable(ExecutableFormat::kHostElf, ByteSpan(junk.data(), junk.size()), {"x"});
  CHECK(exe.status().code() == StatusCode::kDataLoss);

  auto elf = ReadFileToString(HEXIR_TEST_KERNELS_PATH);
  REQUIRE(elf.ok());
  ByteSpan code(reinterpret_cast<const unsigned char*>(elf->data()), elf->size());
  auto missing = device->LoadExecutable(ExecutableFormat::kHostElf, code, {"test_add8", "nope"});
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("'nope'") != std::string::npos);
}

}  // namespace
}  // namespace hexir::hal

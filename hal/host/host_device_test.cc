// What is particular to the host backend (the conformance suite, hal/cts/, tests what every
// backend shares): process memory is device memory, so constants and aligned caller buffers
// are used in place, without a copy.
#include "hal/host/host_device.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "base/file_mapping.h"
#include "base/log.h"

namespace hexir::hal {
namespace {

TEST_CASE("host constants are the caller's bytes, used in place", "[hal]") {
  auto device = CreateHostDevice();
  std::vector<unsigned char> bytes(100, 7);
  auto resident = device->MakeResident(ByteSpan(bytes.data(), bytes.size()), 0);
  REQUIRE(resident.ok());
  CHECK((*resident)->data() == bytes.data());
  CHECK(device->allocator().live_buffers() == 0);  // borrowed, not allocated
}

TEST_CASE("host inputs are bound in place when aligned, copied into staging when not", "[hal]") {
  auto device = CreateHostDevice();
  alignas(16) float data[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto aligned = device->BindHostInput(data, 32, 4, nullptr, nullptr, device->queue());
  REQUIRE(aligned.ok());
  CHECK(*aligned == data);
  CHECK_FALSE(device->NeedsInputStaging(1));  // every address is aligned for bytes
  CHECK(device->NeedsInputStaging(4));
  auto* misaligned = reinterpret_cast<unsigned char*>(data) + 1;
  CHECK(device->BindHostInput(misaligned, 32, 4, nullptr, nullptr, device->queue()).status().code() == StatusCode::kInternal);
  auto staging = device->allocator().Allocate(0, 32, 64);
  REQUIRE(staging.ok());
  auto copied = device->BindHostInput(misaligned, 32, 4, staging->get(), nullptr, device->queue());
  REQUIRE(copied.ok());
  CHECK(*copied == (*staging)->data());
  CHECK(std::memcmp(*copied, misaligned, 32) == 0);
  CHECK_FALSE(device->NeedsOutputStaging());
  float out[8];
  auto bound = device->BindHostOutput(out, 32, nullptr);
  REQUIRE(bound.ok());
  CHECK(*bound == out);
}

TEST_CASE("two kernel libraries with the same entry names keep their own kernels", "[hal]") {
  auto device = CreateHostDevice();
  std::vector<std::unique_ptr<Executable>> loaded;
  for (const char* path : {HEXIR_TEST_KERNELS_PATH, HEXIR_OTHER_TEST_KERNELS_PATH, HEXIR_TEST_KERNELS_PATH}) {
    auto elf = ReadFileToString(path);
    REQUIRE(elf.ok());
    ExecutableSource source;
    source.code = ByteSpan(reinterpret_cast<const unsigned char*>(elf->data()), elf->size());
    source.entry_names = {"test_add8"};
    auto exe = device->LoadExecutable(source);
    REQUIRE(exe.ok());
    loaded.push_back(std::move(*exe));
  }
  float a[8], b[8], out[8];
  for (int i = 0; i < 8; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 1.0f;
  }
  DevicePtr bind[3] = {a, b, out};
  for (size_t l = 0; l < loaded.size(); ++l) {
    REQUIRE(device->queue().Dispatch(*loaded[l], 0, {}, Span<const DevicePtr>(bind, 3)).ok());
    for (int i = 0; i < 8; ++i) CHECK(out[i] == (l == 1 ? a[i] - 1.0f : a[i] + 1.0f));
  }
}

TEST_CASE("a fault a host kernel records is the dispatch's error, then cleared", "[hal]") {
  auto device = CreateHostDevice();
  auto elf = ReadFileToString(HEXIR_OTHER_TEST_KERNELS_PATH);
  REQUIRE(elf.ok());
  ExecutableSource source;
  source.code = ByteSpan(reinterpret_cast<const unsigned char*>(elf->data()), elf->size());
  source.entry_names = {"test_add8", "test_fault"};
  auto exe = device->LoadExecutable(source);
  REQUIRE(exe.ok());
  float a[8] = {}, b[8] = {}, out[8];
  DevicePtr bind[3] = {a, b, out};
  Status faulted = device->queue().Dispatch(**exe, 1, {4, 1, 1}, Span<const DevicePtr>(bind, 3));
  CHECK(faulted.code() == StatusCode::kInternal);
  CHECK(faulted.message() ==
        "kernel 'test_fault': misaligned 8-byte vector load at byte 0x4964 of shared buffer 1 (block 8, thread 64); "
        "a GPU needs 16-byte alignment");
  CHECK(device->queue().Dispatch(**exe, 0, {}, Span<const DevicePtr>(bind, 3)).ok());
  CHECK(device->queue().Dispatch(**exe, 1, {1, 1, 1}, Span<const DevicePtr>(bind, 3)).ok());  // workgroup 1 faults
}

void Capture(LogSeverity severity, const char* message, void* user) {
  if (severity == LogSeverity::kWarning) *static_cast<std::string*>(user) += message;
}

TEST_CASE("the runtime log reaches an installed handler", "[hal]") {
  std::string captured;
  SetLogHandler(Capture, &captured);
  Log(LogSeverity::kWarning, "device 'host' destroyed with 1 live buffers (64 bytes)");
  SetLogHandler(nullptr, nullptr);
  CHECK(captured == "device 'host' destroyed with 1 live buffers (64 bytes)");
}

}  // namespace
}  // namespace hexir::hal

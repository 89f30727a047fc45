// What is particular to the host backend (the conformance suite, hal/cts/, tests what every
// backend shares): process memory is device memory, so constants and aligned caller buffers
// are used in place, without a copy.
#include "hal/host/host_device.h"

#include <catch2/catch.hpp>
#include <cstring>

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
  auto aligned = device->BindHostInput(data, 32, 4, nullptr);
  REQUIRE(aligned.ok());
  CHECK(*aligned == data);
  CHECK_FALSE(device->NeedsInputStaging(1));  // every address is aligned for bytes
  CHECK(device->NeedsInputStaging(4));
  auto* misaligned = reinterpret_cast<unsigned char*>(data) + 1;
  CHECK(device->BindHostInput(misaligned, 32, 4, nullptr).status().code() == StatusCode::kInternal);
  auto staging = device->allocator().Allocate(0, 32, 64);
  REQUIRE(staging.ok());
  auto copied = device->BindHostInput(misaligned, 32, 4, staging->get());
  REQUIRE(copied.ok());
  CHECK(*copied == (*staging)->data());
  CHECK(std::memcmp(*copied, misaligned, 32) == 0);
  CHECK_FALSE(device->NeedsOutputStaging());
  float out[8];
  auto bound = device->BindHostOutput(out, 32, nullptr);
  REQUIRE(bound.ok());
  CHECK(*bound == out);
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

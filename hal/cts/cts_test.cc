// The HAL conformance suite: every driver of the registry runs the same tests on its device.
// Device memory is only read back through the queue (DeviceToHost copies), never through a
// DevicePtr, so the tests hold for a device whose memory the CPU cannot see. Expected bytes
// are computed here from the pattern or the source bytes, never by the backend.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>

#include "base/alignment.h"
#include "hal/cts/cts_kernels.h"
#include "hal/driver_registry.h"

namespace hexir::hal {
namespace {

// Runs `test` on a device of every driver, or only of the driver HEXIR_CTS_DEVICE names (ctest
// runs one suite per backend). An absent device (no GPU) is skipped: with HEXIR_CTS_DEVICE the
// program says "skipped: ..." and exits 77, ctest's skip code, so the skip shows in ctest's
// summary; without it, a warning. Any other failure fails the test.
void ForEachDevice(const std::function<void(Device&)>& test) {
  const char* selected = std::getenv("HEXIR_CTS_DEVICE");
  int ran = 0;
  for (const std::string& name : DriverRegistry::Default().names()) {
    if (selected != nullptr && name != selected) continue;
    DeviceOptions options;
    options.name = name;
    options.threads = 2;
    auto device = DriverRegistry::Default().CreateDevice(options);
    if (!device.ok() && device.status().code() == StatusCode::kFailedPrecondition) {
      if (selected != nullptr) {
        std::printf("skipped: %s\n", device.status().message().c_str());
        std::exit(77);
      }
      WARN("skipping device '" << name << "': " << device.status().message());
      continue;
    }
    REQUIRE(device.ok());
    INFO("device " << (*device)->name());
    test(**device);
    CHECK((*device)->allocator().live_buffers() == 0);
    ++ran;
  }
  CHECK(ran >= 1);  // the host is always there
}

std::vector<unsigned char> ReadBack(Device& device, DevicePtr source, uint64_t bytes) {
  std::vector<unsigned char> out(bytes);
  REQUIRE(device.queue().Copy(CopyDirection::kDeviceToHost, out.data(), source, bytes).ok());
  REQUIRE(device.queue().Synchronize().ok());
  return out;
}

// The backend's test kernels as a source with entries `names` (each with the kernels' block shape).
ExecutableSource Source(const cts::TestKernels& kernels, std::vector<std::string> names) {
  ExecutableSource source;
  source.format = kernels.format;
  source.code = ByteSpan(kernels.code.data(), kernels.code.size());
  source.workgroup_sizes.assign(names.size(), kernels.workgroup_size);
  source.entry_names = std::move(names);
  return source;
}

unsigned char* At(const BufferPtr& buffer, uint64_t offset) { return static_cast<unsigned char*>(buffer->data()) + offset; }

TEST_CASE("allocations know their size and space, are aligned, and are counted until destroyed", "[cts]") {
  ForEachDevice([](Device& device) {
    Allocator& allocator = device.allocator();
    REQUIRE(!allocator.memory_spaces().empty());
    CHECK(allocator.FindMemorySpace(allocator.memory_spaces()[0].name) == 0u);
    CHECK_FALSE(allocator.FindMemorySpace("no such space").has_value());
    uint64_t before = allocator.total_allocations();
    std::vector<BufferPtr> buffers;
    uint64_t bytes = 0;
    for (uint64_t size : {0, 1, 3, 17, 63, 65, 4097, 1 << 20})
      for (uint64_t alignment : {1, 2, 64, 4096}) {
        auto buffer = allocator.Allocate(0, size, alignment);
        REQUIRE(buffer.ok());
        CHECK((*buffer)->size() == size);
        CHECK((*buffer)->memory_space() == 0u);
        CHECK(IsPointerAligned((*buffer)->data(), alignment));
        bytes += size;
        buffers.push_back(std::move(*buffer));
      }
    CHECK(allocator.live_buffers() == buffers.size());
    CHECK(allocator.live_bytes() == bytes);
    CHECK(allocator.total_allocations() == before + buffers.size());
    Status leaks = allocator.CheckNoLeaks(device.name());
    CHECK(leaks.code() == StatusCode::kFailedPrecondition);
    CHECK(leaks.message().find("destroyed with " + std::to_string(buffers.size()) + " live buffers (" +
                               std::to_string(bytes) + " bytes)") != std::string::npos);
    buffers.clear();
    CHECK(allocator.live_buffers() == 0);
    CHECK(allocator.live_bytes() == 0);
    CHECK(allocator.CheckNoLeaks(device.name()).ok());
  });
}

TEST_CASE("allocation errors: unknown space, bad alignment, too large", "[cts]") {
  ForEachDevice([](Device& device) {
    Allocator& allocator = device.allocator();
    auto space = allocator.Allocate(static_cast<uint32_t>(allocator.memory_spaces().size()), 64, 64);
    CHECK(space.status().code() == StatusCode::kInvalidArgument);
    CHECK(space.status().message().find("does not exist") != std::string::npos);
    CHECK(allocator.Allocate(0, 64, 3).status().code() == StatusCode::kInvalidArgument);
    auto available = allocator.AvailableBytes(0);
    REQUIRE(available.ok());
    CHECK(*available > 0);
    CHECK(allocator.AvailableBytes(99).status().code() == StatusCode::kInvalidArgument);
    CHECK(allocator.Allocate(0, uint64_t{1} << 62, 64).status().code() == StatusCode::kResourceExhausted);
    CHECK(allocator.live_buffers() == 0);
  });
}

TEST_CASE("fills of every pattern length at odd sizes and offsets", "[cts]") {
  ForEachDevice([](Device& device) {
    auto buffer = device.allocator().Allocate(0, 256, 64);
    REQUIRE(buffer.ok());
    const uint64_t pattern = 0x0807060504030201ull;
    for (uint8_t n : {1, 2, 4, 8})
      for (uint64_t offset : {0, 8, 24})
        for (uint64_t count : {0, 1, 7, 13}) {
          INFO("pattern length " << int{n} << ", offset " << offset << ", " << count << " patterns");
          REQUIRE(device.queue().Fill((*buffer)->data(), 256, 0xEE, 1).ok());
          REQUIRE(device.queue().Fill(At(*buffer, offset), count * n, pattern, n).ok());
          std::vector<unsigned char> expected(256, 0xEE);
          for (uint64_t i = 0; i < count * n; ++i) expected[offset + i] = static_cast<unsigned char>(1 + i % n);
          CHECK(ReadBack(device, (*buffer)->data(), 256) == expected);
        }
    CHECK(device.queue().Fill((*buffer)->data(), 12, pattern, 3).code() == StatusCode::kInvalidArgument);
    CHECK(device.queue().Fill((*buffer)->data(), 6, pattern, 4).code() == StatusCode::kInvalidArgument);
  });
}

TEST_CASE("copies in every direction at odd sizes and offsets", "[cts]") {
  ForEachDevice([](Device& device) {
    auto buffer = device.allocator().Allocate(0, 1024, 64);
    REQUIRE(buffer.ok());
    std::vector<unsigned char> source(300);
    std::iota(source.begin(), source.end(), static_cast<unsigned char>(7));
    for (uint64_t offset : {0, 1, 17, 64})
      for (uint64_t length : {0, 1, 3, 63, 65, 200}) {
        INFO("offset " << offset << ", length " << length);
        REQUIRE(device.queue().Fill((*buffer)->data(), 1024, 0, 1).ok());
        REQUIRE(device.queue().Copy(CopyDirection::kHostToDevice, At(*buffer, offset), source.data() + 3, length).ok());
        // Device to device, into the upper half.
        REQUIRE(device.queue().Copy(CopyDirection::kDeviceToDevice, At(*buffer, 512 + offset), At(*buffer, offset),
                                    length).ok());
        std::vector<unsigned char> expected(1024, 0);
        for (uint64_t i = 0; i < length; ++i) expected[offset + i] = expected[512 + offset + i] = source[3 + i];
        CHECK(ReadBack(device, (*buffer)->data(), 1024) == expected);
      }
  });
}

TEST_CASE("a test kernel dispatched on device buffers", "[cts]") {
  ForEachDevice([](Device& device) {
    auto kernels = cts::TestKernelsFor(device.name());
    REQUIRE(kernels.ok());
    auto exe = device.LoadExecutable(Source(*kernels, {"test_add8", "test_relu8"}));
    REQUIRE(exe.ok());
    CHECK((*exe)->entry_count() == 2);
    auto buffer = device.allocator().Allocate(0, 4 * 8 * sizeof(float), 64);
    REQUIRE(buffer.ok());
    float a[8], b[8];
    for (int i = 0; i < 8; ++i) {
      a[i] = static_cast<float>(i) - 4.5f;
      b[i] = 0.25f * static_cast<float>(i);
    }
    auto* base = static_cast<float*>((*buffer)->data());
    REQUIRE(device.queue().Copy(CopyDirection::kHostToDevice, base, a, sizeof(a)).ok());
    REQUIRE(device.queue().Copy(CopyDirection::kHostToDevice, base + 8, b, sizeof(b)).ok());
    DevicePtr add[3] = {base, base + 8, base + 16};
    REQUIRE(device.queue().Dispatch(**exe, 0, {}, Span<const DevicePtr>(add, 3)).ok());
    DevicePtr relu[2] = {base + 16, base + 24};
    REQUIRE(device.queue().Dispatch(**exe, 1, {}, Span<const DevicePtr>(relu, 2)).ok());
    std::vector<unsigned char> bytes = ReadBack(device, base + 16, 16 * sizeof(float));
    float out[16];
    std::memcpy(out, bytes.data(), sizeof(out));
    for (int i = 0; i < 8; ++i) {
      CHECK(out[i] == a[i] + b[i]);
      CHECK(out[8 + i] == std::max(a[i] + b[i], 0.0f));
    }
  });
}

TEST_CASE("loading refuses other formats, bad code, missing entries and unmet requirements", "[cts]") {
  ForEachDevice([](Device& device) {
    auto kernels = cts::TestKernelsFor(device.name());
    REQUIRE(kernels.ok());
    ExecutableSource source = Source(*kernels, {"test_add8", "no_such_kernel"});
    auto missing = device.LoadExecutable(source);
    CHECK(missing.status().code() == StatusCode::kNotFound);
    CHECK(missing.status().message().find("'no_such_kernel'") != std::string::npos);

    ExecutableSource other = Source(*kernels, {"test_add8"});
    other.format = kernels->format == ExecutableFormat::kHostElf ? ExecutableFormat::kCudaPtx : ExecutableFormat::kHostElf;
    CHECK(device.LoadExecutable(other).status().code() == StatusCode::kInvalidArgument);

    std::vector<unsigned char> junk(256, 0x42);
    ExecutableSource bad = Source(*kernels, {"test_add8"});
    bad.code = ByteSpan(junk.data(), junk.size());
    CHECK(device.LoadExecutable(bad).status().code() == StatusCode::kDataLoss);

    if (kernels->format == ExecutableFormat::kHostElf) {
      ExecutableSource needs = Source(*kernels, {"test_add8"});
      needs.cpu_features = {"avx9000"};
      auto refused = device.LoadExecutable(needs);
      CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
      CHECK(refused.status().message().find("'avx9000'") != std::string::npos);
    }
  });
}

TEST_CASE("constants made resident read back unchanged", "[cts]") {
  ForEachDevice([](Device& device) {
    std::vector<unsigned char> bytes(1000);
    std::iota(bytes.begin(), bytes.end(), static_cast<unsigned char>(3));
    auto resident = device.MakeResident(ByteSpan(bytes.data(), bytes.size()), 0);
    REQUIRE(resident.ok());
    CHECK((*resident)->size() == bytes.size());
    CHECK(ReadBack(device, (*resident)->data(), bytes.size()) == bytes);
    CHECK(device.MakeResident(ByteSpan(bytes.data(), bytes.size()), 99).status().code() ==
          StatusCode::kInvalidArgument);
  });
}

TEST_CASE("a caller's host buffers reach kernels, aligned or not", "[cts]") {
  ForEachDevice([](Device& device) {
    alignas(64) unsigned char host[64 + 1];
    for (int i = 0; i < 65; ++i) host[i] = static_cast<unsigned char>(100 + i);
    for (unsigned char* data : {host, host + 1}) {  // 4-byte elements: aligned, then not
      BufferPtr staging;
      if (device.NeedsInputStaging(4)) {
        auto made = device.allocator().Allocate(0, 32, 64);
        REQUIRE(made.ok());
        staging = std::move(*made);
      }
      auto bound = device.BindHostInput(data, 32, 4, staging.get(), nullptr, device.queue());
      REQUIRE(bound.ok());
      CHECK(IsPointerAligned(*bound, 4));
      CHECK(ReadBack(device, *bound, 32) == std::vector<unsigned char>(data, data + 32));
    }
    alignas(64) unsigned char out[32] = {};
    BufferPtr staging;
    if (device.NeedsOutputStaging()) {
      auto made = device.allocator().Allocate(0, 32, 64);
      REQUIRE(made.ok());
      staging = std::move(*made);
    }
    auto bound = device.BindHostOutput(out, 32, staging.get());
    REQUIRE(bound.ok());
    REQUIRE(device.queue().Fill(*bound, 32, 0x5A, 1).ok());
    REQUIRE(device.FinishHostOutput(out, 32, staging.get(), nullptr, device.queue()).ok());
    REQUIRE(device.queue().Synchronize().ok());
    CHECK(std::vector<unsigned char>(out, out + 32) == std::vector<unsigned char>(32, 0x5A));
  });
}

TEST_CASE("a caller's host buffers go through pinned host staging where the device makes it", "[cts]") {
  ForEachDevice([](Device& device) {
    alignas(64) unsigned char host[33];
    for (int i = 0; i < 33; ++i) host[i] = static_cast<unsigned char>(3 * i + 1);
    BufferPtr staging, out_staging;
    HostStagingPtr pinned, out_pinned;
    if (device.NeedsInputStaging(4)) {
      auto made = device.allocator().Allocate(0, 32, 64);
      REQUIRE(made.ok());
      staging = std::move(*made);
      auto host_staging = device.AllocateHostStaging(32);
      REQUIRE(host_staging.ok());
      pinned = std::move(*host_staging);
      if (pinned) CHECK(pinned->size() >= 32);
    }
    auto queue = device.CreateQueue();
    REQUIRE(queue.ok());
    auto bound = device.BindHostInput(host + 1, 32, 4, staging.get(), pinned.get(), **queue);
    REQUIRE(bound.ok());
    // The caller may change its buffer once the input is bound: the copy was taken.
    host[1] = 0xEE;
    REQUIRE((*queue)->Synchronize().ok());
    std::vector<unsigned char> want(host + 1, host + 33);
    if (staging) want[0] = 4;  // 3 * 1 + 1, copied before the change
    CHECK(ReadBack(device, *bound, 32) == want);
    // An output: written on the device, copied back into pinned staging, then to the caller.
    alignas(64) unsigned char out[32] = {};
    if (device.NeedsOutputStaging()) {
      auto made = device.allocator().Allocate(0, 32, 64);
      REQUIRE(made.ok());
      out_staging = std::move(*made);
      auto host_staging = device.AllocateHostStaging(32);
      REQUIRE(host_staging.ok());
      out_pinned = std::move(*host_staging);
    }
    auto target = device.BindHostOutput(out, 32, out_staging.get());
    REQUIRE(target.ok());
    REQUIRE((*queue)->Fill(*target, 32, 0x3C, 1).ok());
    REQUIRE(device.FinishHostOutput(out, 32, out_staging.get(), out_pinned.get(), **queue).ok());
    REQUIRE((*queue)->Synchronize().ok());
    device.CompleteHostOutput(out, 32, out_pinned.get());
    CHECK(std::vector<unsigned char>(out, out + 32) == std::vector<unsigned char>(32, 0x3C));
  });
}

TEST_CASE("queues a session creates run their own commands in order", "[cts]") {
  ForEachDevice([](Device& device) {
    auto first = device.CreateQueue();
    auto second = device.CreateQueue();
    REQUIRE(first.ok());
    REQUIRE(second.ok());
    auto buffer = device.allocator().Allocate(0, 1024, 64);
    REQUIRE(buffer.ok());
    unsigned char* base = static_cast<unsigned char*>((*buffer)->data());
    // Each queue orders its own commands: a fill, then a copy of what the fill wrote.
    REQUIRE((*first)->Fill(base, 256, 0x11, 1).ok());
    REQUIRE((*second)->Fill(base + 512, 256, 0x22, 1).ok());
    REQUIRE((*first)->Copy(CopyDirection::kDeviceToDevice, base + 256, base, 256).ok());
    REQUIRE((*second)->Copy(CopyDirection::kDeviceToDevice, base + 768, base + 512, 256).ok());
    REQUIRE((*first)->Synchronize().ok());
    REQUIRE((*second)->Synchronize().ok());
    std::vector<unsigned char> got = ReadBack(device, base, 1024);
    CHECK(std::vector<unsigned char>(got.begin(), got.begin() + 512) == std::vector<unsigned char>(512, 0x11));
    CHECK(std::vector<unsigned char>(got.begin() + 512, got.end()) == std::vector<unsigned char>(512, 0x22));
    // A caller's input staged on a session's queue is there after that queue synchronizes.
    alignas(64) unsigned char host[33];
    for (int i = 0; i < 33; ++i) host[i] = static_cast<unsigned char>(7 * i);
    BufferPtr staging;
    if (device.NeedsInputStaging(4)) {
      auto made = device.allocator().Allocate(0, 32, 64);
      REQUIRE(made.ok());
      staging = std::move(*made);
    }
    auto bound = device.BindHostInput(host + 1, 32, 4, staging.get(), nullptr, **second);
    REQUIRE(bound.ok());
    REQUIRE((*second)->Synchronize().ok());
    CHECK(ReadBack(device, *bound, 32) == std::vector<unsigned char>(host + 1, host + 33));
  });
}

TEST_CASE("a queue times its commands with the device's clock, or says it has none", "[cts]") {
  using TimingClock = CommandQueue::TimingClock;
  ForEachDevice([](Device& device) {
    auto queue = device.CreateQueue();
    REQUIRE(queue.ok());
    auto buffer = device.allocator().Allocate(0, 1 << 20, 64);
    REQUIRE(buffer.ok());
    for (TimingClock clock : {TimingClock::kRun, TimingClock::kCommand}) {
      auto before = (*queue)->TimedMilliseconds(clock);
      REQUIRE(before.ok());
      CHECK(!before->has_value());  // nothing timed yet
    }
    // The run clock spans two fills, the command clock the second one only: the clocks run
    // apart, as a profile of a timed run needs.
    REQUIRE((*queue)->BeginTiming(TimingClock::kRun).ok());
    REQUIRE((*queue)->Fill((*buffer)->data(), 1 << 20, 0x3F800000, 4).ok());
    REQUIRE((*queue)->BeginTiming(TimingClock::kCommand).ok());
    REQUIRE((*queue)->Fill((*buffer)->data(), 1 << 20, 0x40000000, 4).ok());
    REQUIRE((*queue)->EndTiming(TimingClock::kCommand).ok());
    REQUIRE((*queue)->EndTiming(TimingClock::kRun).ok());
    REQUIRE((*queue)->Synchronize().ok());
    auto run = (*queue)->TimedMilliseconds(TimingClock::kRun);
    auto command = (*queue)->TimedMilliseconds(TimingClock::kCommand);
    REQUIRE(run.ok());
    REQUIRE(command.ok());
    if (device.name() == "host") {
      CHECK(!run->has_value());  // the host's work runs on the caller's thread
      CHECK(!command->has_value());
    } else {
      REQUIRE(run->has_value());
      REQUIRE(command->has_value());
      CHECK(**command >= 0.0);
      CHECK(**command <= **run);
      CHECK(**run < 1000.0);
    }
  });
}

// Host memory a graph copies from: pinned where the device makes it (as sessions stage
// through), else the caller's own.
struct HostFloats {
  HostStagingPtr pinned;
  std::vector<float> own;
  float* data() { return pinned ? static_cast<float*>(pinned->data()) : own.data(); }
};
HostFloats MakeHostFloats(Device& device, size_t count) {
  HostFloats h;
  auto pinned = device.AllocateHostStaging(count * sizeof(float));
  REQUIRE(pinned.ok());
  h.pinned = std::move(*pinned);
  if (!h.pinned) h.own.resize(count);
  return h;
}

TEST_CASE("a graph replays a recorded run, updates changed pointers in place, re-records changed commands", "[cts]") {
  ForEachDevice([](Device& device) {
    auto kernels = cts::TestKernelsFor(device.name());
    REQUIRE(kernels.ok());
    auto exe = device.LoadExecutable(Source(*kernels, {"test_add8", "test_relu8"}));
    REQUIRE(exe.ok());
    auto queue = device.CreateQueue();
    REQUIRE(queue.ok());
    auto graph = device.CreateGraph();
    REQUIRE(graph.ok());
    CommandGraph& g = **graph;
    // Slots of 8 floats: a, b, sum, relu, other sum, other relu, a fill target.
    auto buffer = device.allocator().Allocate(0, 7 * 8 * sizeof(float), 64);
    REQUIRE(buffer.ok());
    auto* slot = static_cast<float*>((*buffer)->data());
    auto at = [&](int i) { return static_cast<DevicePtr>(slot + 8 * i); };
    HostFloats first = MakeHostFloats(device, 16), second = MakeHostFloats(device, 16);
    for (int i = 0; i < 16; ++i) {
      first.data()[i] = static_cast<float>(i) - 7.5f;
      second.data()[i] = 2.0f * static_cast<float>(i) - 20.0f;
    }
    // One pass: both inputs from `host`, a fill (8-byte pattern: two floats), then add and relu.
    auto pass = [&](float* host, int sum, int relu, bool with_fill) {
      g.BeginPass();
      REQUIRE(g.Copy(CopyDirection::kHostToDevice, at(0), host, 16 * sizeof(float)).ok());
      if (with_fill) {
        uint64_t pattern = (uint64_t{0x40400000} << 32) | 0x3F800000;  // 1.0f, 3.0f
        REQUIRE(g.Fill(at(6), 8 * sizeof(float), pattern, 8).ok());
      }
      DevicePtr add[3] = {at(0), at(1), at(sum)};
      REQUIRE(g.Dispatch(**exe, 0, {}, Span<const DevicePtr>(add, 3)).ok());
      DevicePtr r[2] = {at(sum), at(relu)};
      REQUIRE(g.Dispatch(**exe, 1, {}, Span<const DevicePtr>(r, 2)).ok());
      REQUIRE(g.EndPass().ok());
      REQUIRE(g.Launch(**queue).ok());
      REQUIRE((*queue)->Synchronize().ok());
    };
    auto check = [&](const float* host, int sum, int relu) {
      std::vector<unsigned char> bytes = ReadBack(device, at(0), 7 * 8 * sizeof(float));
      float got[56];
      std::memcpy(got, bytes.data(), sizeof(got));
      for (int i = 0; i < 8; ++i) {
        float want = host[i] + host[8 + i];
        CHECK(got[8 * sum + i] == want);
        CHECK(got[8 * relu + i] == std::max(want, 0.0f));
      }
    };
    // Nothing launches before a pass ended, and a graph issues nothing by itself.
    CHECK(g.Launch(**queue).code() == StatusCode::kFailedPrecondition);
    CHECK(g.Fill(at(6), 4, 0, 4).code() == StatusCode::kFailedPrecondition);
    CHECK(g.Synchronize().code() == StatusCode::kFailedPrecondition);

    pass(first.data(), 2, 3, true);
    check(first.data(), 2, 3);
    std::vector<unsigned char> filled = ReadBack(device, at(6), 8 * sizeof(float));
    for (int i = 0; i < 8; ++i) {
      float f;
      std::memcpy(&f, filled.data() + 4 * i, 4);
      CHECK(f == (i % 2 == 0 ? 1.0f : 3.0f));
    }
    CHECK(g.stats().instantiations == 1);
    CHECK(g.stats().node_updates == 0);
    // The same commands again: a launch, nothing updated.
    REQUIRE(device.queue().Fill(at(2), 16 * sizeof(float), 0, 4).ok());
    pass(first.data(), 2, 3, true);
    check(first.data(), 2, 3);
    CHECK(g.stats().instantiations == 1);
    CHECK(g.stats().node_updates == 0);
    // Other host memory and other device slots: the copy and both dispatches update in place.
    pass(second.data(), 4, 5, true);
    check(second.data(), 4, 5);
    CHECK(g.stats().instantiations == 1);
    CHECK(g.stats().node_updates == 3);
    // Back again, so the instance really holds the updated pointers each time.
    REQUIRE(device.queue().Fill(at(2), 16 * sizeof(float), 0, 4).ok());
    pass(first.data(), 2, 3, true);
    check(first.data(), 2, 3);
    CHECK(g.stats().node_updates == 6);
    // A command fewer (the fill): recorded again from there.
    pass(second.data(), 2, 3, false);
    check(second.data(), 2, 3);
    CHECK(g.stats().instantiations == 2);
    CHECK(g.stats().launches == 5);
    CHECK(g.commands().size() == 3);
  });
}

TEST_CASE("the driver registry makes devices by name and says why it cannot", "[cts]") {
  const DriverRegistry& registry = DriverRegistry::Default();
  for (const char* name : {"host", "cpu", "host:0"}) {
    auto device = registry.CreateDevice({name, 1});
    REQUIRE(device.ok());
    CHECK((*device)->name() == "host");
  }
  auto unknown = registry.CreateDevice({"tpu", 1});
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK(unknown.status().message() == "no such device 'tpu' (devices: host, cuda)");
  CHECK(registry.CreateDevice({"host", -1}).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hexir::hal

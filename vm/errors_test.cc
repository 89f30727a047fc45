// One test per runtime error of docs/errors.md: each is a Status with its code and a message
// naming the values involved.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "base/file_mapping.h"
#include "hexir/hexir.h"
#include "serializer/file_format.h"
#include "serializer/writer.h"
#include "vm/test_executable.h"

namespace hexir {
namespace {

using Bytes = std::vector<uint8_t>;

struct Fixture {
  Fixture() {
    auto r = Runtime::Create({});
    REQUIRE(r.ok());
    runtime = std::move(*r);
  }
  ~Fixture() { std::remove(path.c_str()); }
  Status Load(const Bytes& bytes, bool verify_weights = false) {
    REQUIRE(WriteFileAtomically(path, bytes.data(), bytes.size()).ok());
    ModuleOptions options;
    options.verify_weights = verify_weights;
    auto m = Module::Load(*runtime, path, options);
    if (m.ok()) module = *m;
    return m.status();
  }
  std::unique_ptr<Runtime> runtime;
  std::shared_ptr<const Module> module;
  std::string path = "/tmp/hexir_errors_" + std::to_string(::getpid()) + ".hxb";
};

Bytes Good() { return serializer::WriteExecutable(testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH)); }

Bytes FromSpec(void (*edit)(serializer::ExecutableSpec&)) {
  serializer::ExecutableSpec spec = testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH);
  edit(spec);
  return serializer::WriteExecutable(spec);
}



TEST_CASE("error: no such file", "[errors]") {
  Fixture f;
  auto m = Module::Load(*f.runtime, "/nonexistent/model.hxb");
  CHECK(m.status().code() == StatusCode::kNotFound);
  CHECK(m.status().message() == "cannot open '/nonexistent/model.hxb': No such file or directory");
}

TEST_CASE("error: bad magic", "[errors]") {
  Fixture f;
  Bytes b = Good();
  b[0] = 'X';
  Status s = f.Load(b);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("bad magic: not a Hexir executable (.hxb)") != std::string::npos);
}

TEST_CASE("error: truncated file", "[errors]") {
  Fixture f;
  Bytes b = Good();
  size_t full = b.size();
  b.resize(full - 100);
  Status s = f.Load(b);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("file is " + std::to_string(full - 100) + " bytes but its header says " +
                         std::to_string(full) + ": truncated or padded") != std::string::npos);
  b.resize(20);
  CHECK(f.Load(b).message().find("file is 20 bytes, shorter than the 64-byte header") != std::string::npos);
}

TEST_CASE("error: unsupported format version", "[errors]") {
  Fixture f;
  Bytes b = Good();
  uint32_t v = 99;
  std::memcpy(b.data() + offsetof(serializer::FileHeader, format_version), &v, 4);
  Status s = f.Load(b);
  CHECK(s.code() == StatusCode::kUnimplemented);
  CHECK(s.message().find("format version 99 is not supported (this runtime reads version 5)") != std::string::npos);
  // Executables of the previous formats (3: no narrow constants; 2: one arena, no memory spaces;
  // 1: no binding sizes) are refused the same way.
  for (uint32_t old : {1u, 2u, 3u, 4u}) {
    std::memcpy(b.data() + offsetof(serializer::FileHeader, format_version), &old, 4);
    CHECK(f.Load(b).message().find("format version " + std::to_string(old) +
                                   " is not supported (this runtime reads version 5); recompile") != std::string::npos);
  }
}

TEST_CASE("error: checksum mismatch", "[errors]") {
  Fixture f;
  Bytes good = Good();
  Bytes b = good;
  b[offsetof(serializer::FileHeader, metadata_length)] ^= 1;
  CHECK(f.Load(b).message().find("header checksum mismatch") != std::string::npos);
  b = good;
  b[serializer::kHeaderSize + 40] ^= 1;
  CHECK(f.Load(b).message().find("metadata checksum mismatch") != std::string::npos);
  REQUIRE(f.Load(good).ok());
  // The code section starts at the first 64-byte boundary after the metadata.
  uint64_t meta_len;
  std::memcpy(&meta_len, good.data() + offsetof(serializer::FileHeader, metadata_length), 8);
  uint64_t code = (serializer::kHeaderSize + meta_len + 63) / 64 * 64;
  b = good;
  b[code + 100] ^= 1;
  Status s = f.Load(b);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("section 0 (HostCode) checksum mismatch: the file is corrupt") != std::string::npos);
  // Weights are only checksummed on request.
  b = good;
  b[b.size() - 1] ^= 1;
  CHECK(f.Load(b).ok());
  CHECK(f.Load(b, /*verify_weights=*/true).message().find("section 1 (Constants) checksum mismatch") !=
        std::string::npos);
}

TEST_CASE("error: slot out of range", "[errors]") {
  Fixture f;
  Status s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) {
    std::get<serializer::DispatchCommand>(spec.functions[0].commands[2]).bindings[1].offset = 48;
  }));
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("function 'main' command 2: slot [48, +32) exceeds its space of 64 bytes") !=
        std::string::npos);
}

TEST_CASE("error: dispatch arity", "[errors]") {
  Fixture f;
  Status s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) {
    std::get<serializer::DispatchCommand>(spec.functions[0].commands[1]).bindings.pop_back();
  }));
  CHECK(s.message().find("DISPATCH of 'test_add8' has 2 bindings; the kernel takes 3") != std::string::npos);
}

TEST_CASE("error: missing kernel", "[errors]") {
  Fixture f;
  Status s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) { spec.libraries[0].entries[1].name = "nope"; }));
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find("kernel 'nope' is missing from the host kernel library") != std::string::npos);
  s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) { spec.libraries[0].code.assign(4096, 0); }));
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("host kernel library is not an ELF shared object (4096 bytes)") != std::string::npos);
}

TEST_CASE("error: kernels built for a CPU extension this CPU lacks", "[errors]") {
  Fixture f;
  Status s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) { spec.libraries[0].cpu_features = {"avx9000"}; }));
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(s.message().find("its kernels need the CPU extension 'avx9000', which this CPU lacks") != std::string::npos);
  // No requirement: accepted.
  CHECK(f.Load(FromSpec([](serializer::ExecutableSpec& spec) { spec.libraries[0].cpu_features = {}; })).ok());
}

TEST_CASE("error: an executable for a memory space this device lacks", "[errors]") {
  Fixture f;
  Status s = f.Load(FromSpec([](serializer::ExecutableSpec& spec) {
    spec.target = "cuda";
    spec.memory_spaces = {{"device", false}};
  }));
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(s.message().find("compiled for target 'cuda', which needs memory space 'device'; device 'host' has no "
                         "such space (run it on a device of that target, or recompile it with hexir-compile "
                         "--target for this device)") != std::string::npos);
  // A space the CPU sees (a machine's SRAM) is simulated in host memory: accepted.
  CHECK(f.Load(FromSpec([](serializer::ExecutableSpec& spec) { spec.memory_spaces = {{"sram", true}}; })).ok());
}

TEST_CASE("error: a session over its memory limit", "[errors]") {
  Fixture f;
  REQUIRE(f.Load(Good()).ok());
  // The test executable: a 64-byte arena and one 32-byte f32 input, staged when misaligned.
  uint64_t module_buffers = f.runtime->live_buffers();  // the module's filled constants
  SessionOptions options;
  options.memory_limit_bytes = 95;
  auto s = Session::Create(f.module, options);
  CHECK(s.status().code() == StatusCode::kResourceExhausted);
  CHECK(s.status().message() ==
        "a session of function 'main' needs 96 bytes of device memory (arenas 64, staging 32), over its limit "
        "of 95 bytes (SessionOptions::memory_limit_bytes)");
  CHECK(f.runtime->live_buffers() == module_buffers);  // nothing allocated
  options.memory_limit_bytes = 96;
  CHECK(Session::Create(f.module, options).ok());
}

TEST_CASE("error: bindings at run", "[errors]") {
  Fixture f;
  REQUIRE(f.Load(Good()).ok());
  CHECK(Session::Create(f.module, "nope").status().message() == "no function 'nope' in the module (it has: main)");
  auto session = Session::Create(f.module);
  REQUIRE(session.ok());
  alignas(64) float x[8] = {}, y[8], t[8];
  int64_t xs[] = {2, 4}, wrong[] = {8}, ts[] = {8};
  TensorView in{x, ElementType::kF32, Span<const int64_t>(xs, 2)};
  MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(xs, 2)},
                              {t, ElementType::kF32, Span<const int64_t>(ts, 1)}};
  Span<const TensorView> ins(&in, 1);
  Span<const MutableTensorView> out_span(outs, 2);
  CHECK((*session)->Run(ins, out_span).ok());
  // Missing input.
  Status s = (*session)->Run(Span<const TensorView>(), out_span);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "function 'main' takes 1 inputs, got 0");
  // Shape, then element type.
  in.shape = Span<const int64_t>(wrong, 1);
  CHECK((*session)->Run(ins, out_span).message() == "input 0 'x' expects 2x4 f32, got 8 f32");
  in.shape = Span<const int64_t>(xs, 2);
  in.element_type = ElementType::kF64;
  CHECK((*session)->Run(ins, out_span).message() == "input 0 'x' expects 2x4 f32, got 2x4 f64");
  in.element_type = ElementType::kF32;
  // No data.
  in.data = nullptr;
  CHECK((*session)->Run(ins, out_span).message() == "input 0 'x' has no data");
  in.data = x;
  // An output that overlaps an input.
  outs[1].data = x;
  CHECK((*session)->Run(ins, out_span).message() ==
        "output 1 't' overlaps input 0 'x'; give outputs their own buffers");
}

TEST_CASE("error: no such device", "[errors]") {
  RuntimeOptions options;
  options.device = "tpu";
  auto r = Runtime::Create(options);
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK(r.status().message() == "no such device 'tpu' (devices: host, cuda)");
  // Without the NVIDIA driver or a GPU (CI), a sentence saying which; with one, a device.
  options.device = "cuda";
  r = Runtime::Create(options);
  if (!r.ok()) {
    CHECK(r.status().code() == StatusCode::kFailedPrecondition);
    CHECK((r.status().message().find("no CUDA driver: libcuda.so.1 cannot be loaded") == 0 ||
           r.status().message().find("no CUDA device") == 0));
  } else {
    CHECK((*r)->device_name() == "cuda:0");
  }
  options.device = "cuda:x";
  CHECK(Runtime::Create(options).status().code() == StatusCode::kInvalidArgument);
  options.device = "host";
  options.threads = -1;
  CHECK(Runtime::Create(options).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hexir

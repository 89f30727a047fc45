// Mutated executables (truncations, byte flips, corrupted length and offset fields) are given
// to the loader: none may crash; each is refused, or, if it still verifies, runs.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "base/file_mapping.h"
#include "hexir/hexir.h"
#include "serializer/file_format.h"
#include "serializer/writer.h"
#include "vm/test_executable.h"

namespace hexir {
namespace {

TEST_CASE("2000 mutated executables are refused or run and never crash", "[vm]") {
  std::vector<uint8_t> good = serializer::WriteExecutable(testing::TestExecutableSpec(HEXIR_TEST_KERNELS_PATH));
  REQUIRE(!good.empty());
  RuntimeOptions options;
  options.threads = 1;
  auto runtime = Runtime::Create(options);
  REQUIRE(runtime.ok());
  std::string path = "/tmp/hexir_corrupt_" + std::to_string(::getpid()) + ".hxb";
  std::mt19937_64 rng(20261129);
  int refused = 0, ran = 0;
  alignas(64) float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float y[8], t[8];
  int64_t xs[] = {2, 4}, ts[] = {8};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes = good;
    switch (trial % 4) {
      case 0:  // truncation
        bytes.resize(rng() % bytes.size());
        break;
      case 1: {  // random byte flips, anywhere
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        break;
      }
      case 2: {  // a corrupted 64-bit length or offset field of the header, checksum fixed up
        size_t fields[] = {offsetof(serializer::FileHeader, metadata_offset),
                           offsetof(serializer::FileHeader, metadata_length),
                           offsetof(serializer::FileHeader, file_length)};
        size_t at = fields[rng() % 3];
        uint64_t v = rng() % 3 == 0 ? rng() : rng() % (bytes.size() * 2);
        std::memcpy(bytes.data() + at, &v, 8);
        uint64_t sum = serializer::Checksum(bytes.data(), offsetof(serializer::FileHeader, header_checksum));
        std::memcpy(bytes.data() + offsetof(serializer::FileHeader, header_checksum), &sum, 8);
        break;
      }
      case 3: {  // a flip inside the metadata with both checksums fixed up: only the
                 // structural and semantic checks stand between it and the interpreter
        uint64_t meta_off, meta_len;
        std::memcpy(&meta_off, bytes.data() + offsetof(serializer::FileHeader, metadata_offset), 8);
        std::memcpy(&meta_len, bytes.data() + offsetof(serializer::FileHeader, metadata_length), 8);
        bytes[meta_off + rng() % meta_len] ^= static_cast<uint8_t>(1 + rng() % 255);
        uint64_t msum = serializer::Checksum(bytes.data() + meta_off, meta_len);
        std::memcpy(bytes.data() + offsetof(serializer::FileHeader, metadata_checksum), &msum, 8);
        uint64_t hsum = serializer::Checksum(bytes.data(), offsetof(serializer::FileHeader, header_checksum));
        std::memcpy(bytes.data() + offsetof(serializer::FileHeader, header_checksum), &hsum, 8);
        break;
      }
    }
    REQUIRE(WriteFileAtomically(path, bytes.data(), bytes.size()).ok());
    auto module = Module::Load(**runtime, path);
    if (!module.ok()) {
      CHECK_FALSE(module.status().message().empty());
      ++refused;
      continue;
    }
    auto names = (*module)->function_names();
    if (names.empty()) {
      ++ran;
      continue;
    }
    auto session = Session::Create(*module, names[0]);
    if (!session.ok()) {
      ++refused;
      continue;
    }
    // Bind whatever signature survived; a mismatch is refused by Run(), which is fine too.
    TensorView in{x, ElementType::kF32, Span<const int64_t>(xs, 2)};
    MutableTensorView outs[] = {{y, ElementType::kF32, Span<const int64_t>(xs, 2)},
                                {t, ElementType::kF32, Span<const int64_t>(ts, 1)}};
    (*session)->Run(Span<const TensorView>(&in, 1), Span<const MutableTensorView>(outs, 2)).IgnoreError();
    ++ran;
  }
  std::remove(path.c_str());
  INFO("refused " << refused << ", ran " << ran);
  CHECK(refused + ran == 2000);
  CHECK(refused > 1500);  // nearly every mutation must be caught
}

}  // namespace
}  // namespace hexir

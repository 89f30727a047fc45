// Constants and the fixed-size header of the .hxb container, shared by writer and reader.
#pragma once

#include <cstdint>
#include <cstddef>

namespace hexir::serializer {

inline constexpr char kMagic[8] = {'H', 'E', 'X', 'I', 'R', 'X', 'B', '\0'};
// Bumped on any incompatible change of the layout or of executable.fbs.
// 2: kernel entries record each binding's bytes (binding_bytes), which the loader checks.
// 3: arenas per memory space (Function.arenas; Arena slots name theirs), the target and its
//    memory spaces, kernel libraries name their format and entries their workgroup shape.
// 4: constants stored as f16 or bf16 and widened at load (NarrowConstants, constant_widenings):
//    an older loader would leave them unwidened.
// 5: buckets say whether their rows interact (Function.rows_mixed_by); an older file's buckets
//    were never checked, and padding them could give a wrong answer.
inline constexpr uint32_t kFormatVersion = 5;
inline constexpr uint64_t kHeaderSize = 64;
inline constexpr uint64_t kSectionAlignment = 64;
inline constexpr uint64_t kConstantsAlignment = 4096;
// Where a CUDA kernel's binding may start inside its buffer: its 128-bit accesses count from there.
inline constexpr uint64_t kCudaBindingAlignment = 16;
// LOOP and IF bodies nest at most this deep (the interpreter recurses once per level).
inline constexpr size_t kMaxBodyNesting = 32;

// The first 64 bytes of every .hxb file. Little-endian, written field by field.
struct FileHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;  // kHeaderSize
  uint64_t metadata_offset;
  uint64_t metadata_length;
  uint64_t metadata_checksum;  // XXH3-64 of the flatbuffer
  uint64_t file_length;
  uint64_t header_checksum;  // XXH3-64 of the 48 bytes before this field
  uint8_t reserved[8];
};
static_assert(sizeof(FileHeader) == kHeaderSize, "FileHeader must be 64 bytes");
static_assert(offsetof(FileHeader, header_checksum) == 48, "checksum covers 48 bytes");

// XXH3-64 over `size` bytes (the checksum of every section and of the metadata).
uint64_t Checksum(const void* data, size_t size);

}  // namespace hexir::serializer

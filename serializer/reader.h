// The checked reader: verifies a .hxb image once, then hands out trusted views of it.
//
// Open() checks, in order: the header (magic, version, lengths, header checksum), the metadata
// checksum and flatbuffer structure, every section's range, alignment and (code always,
// constants on request) checksum, and every function's signatures and commands: each slot
// inside its memory space, each dispatch's arity equal to its kernel entry's, aliases and fill
// patterns well-formed, nothing written into inputs or constants. After Open() succeeds the
// interpreter trusts the image. Any failure is DATA_LOSS (corrupt) or UNIMPLEMENTED (newer
// format) with a message naming the field and the values.
//
// Ownership: an ExecutableView does not own the bytes; they must outlive it. The bytes must be
// 8-byte aligned in memory (a mapping is page-aligned). Thread safety: immutable; shareable.
#pragma once

#include <cstdint>
#include <string>

#include "hexir/span.h"
#include "hexir/status.h"
#include "serializer/executable_generated.h"

namespace hexir::serializer {

struct ReadOptions {
  // Also checksum the constant pool (reads all weights; off by default so loads stay cheap).
  bool verify_constants = false;
};

class ExecutableView {
 public:
  static StatusOr<ExecutableView> Open(ByteSpan file, const ReadOptions& options = {});

  const fb::Executable& executable() const { return *root_; }
  // The bytes of section `index` (checked in range by Open()).
  ByteSpan section(uint32_t index) const;
  // The constant pool, empty when there is none.
  ByteSpan constants() const;
  // The f16/bf16 values of Executable.constant_widenings (empty if none).
  ByteSpan narrow_constants() const;
  // The function named `name`, or nullptr.
  const fb::Function* FindFunction(const std::string& name) const;
  // Byte size of a tensor signature (checked against overflow by Open()).
  static uint64_t TensorBytes(const fb::TensorSignature& sig);

 private:
  ExecutableView(ByteSpan file, const fb::Executable* root) : file_(file), root_(root) {}
  ByteSpan file_;
  const fb::Executable* root_;
};

}  // namespace hexir::serializer

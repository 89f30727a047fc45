// hal::Buffer: device memory in one memory space that knows its size and its space. A buffer
// made by an Allocator returns its memory to it when destroyed, so no caller has to remember a
// size; a borrowed buffer (Buffer::Borrow) wraps memory someone else owns, such as constants
// used in place from a mapped file, and frees nothing.
//
// Ownership: a BufferPtr owns its buffer; it must be destroyed before its allocator's device.
// Thread safety: immutable; destroying buffers of one allocator from several threads is safe.
#pragma once

#include <cstdint>
#include <memory>

namespace hexir::hal {

// An address in device memory (on the host, an ordinary pointer).
using DevicePtr = void*;

class Allocator;

class Buffer {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Memory owned elsewhere, seen as a buffer of memory space `memory_space`; outlived by it.
  static std::unique_ptr<Buffer> Borrow(DevicePtr data, uint64_t size, uint32_t memory_space);

  DevicePtr data() const { return data_; }
  uint64_t size() const { return size_; }
  // Index into the allocator's memory_spaces().
  uint32_t memory_space() const { return memory_space_; }

 private:
  friend class Allocator;
  Buffer(Allocator* owner, DevicePtr data, uint64_t size, uint32_t memory_space)
      : owner_(owner), data_(data), size_(size), memory_space_(memory_space) {}
  Allocator* owner_;  // nullptr: borrowed
  DevicePtr data_;
  uint64_t size_;
  uint32_t memory_space_;
};

using BufferPtr = std::unique_ptr<Buffer>;

}  // namespace hexir::hal

// FileMapping: a read-only memory mapping of a whole file.
//
// Ownership: the mapping owns the mapped pages and unmaps them on destruction; bytes() is valid
// for the mapping's lifetime. Thread safety: immutable after Open(); safe to share.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hexir/span.h"
#include "hexir/status.h"

namespace hexir {

class FileMapping {
 public:
  // Maps `path` read-only. An empty file maps to an empty span.
  static StatusOr<std::unique_ptr<FileMapping>> Open(const std::string& path);
  // Reads `path` into private, read-only pages of its own: later changes of the file (a
  // truncation, an overwrite in place) do not reach them. DATA_LOSS if the file changes size
  // while it is read.
  static StatusOr<std::unique_ptr<FileMapping>> Copy(const std::string& path);
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;

  ByteSpan bytes() const { return ByteSpan(static_cast<const unsigned char*>(data_), size_); }

 private:
  FileMapping(void* data, size_t size) : data_(data), size_(size) {}
  void* data_;
  size_t size_;
};

// Every path read here must be a regular file: a FIFO, a device (/dev/zero), a directory is
// INVALID_ARGUMENT naming what it is, before any read (nothing waits for a writer, nothing reads
// without end); a file is read to the size it had when opened.
//
// Reads a whole file into memory (tools and tests; the runtime maps instead).
StatusOr<std::string> ReadFileToString(const std::string& path);
// Writes `size` bytes to `path`. A regular file (or a new one; through a symbolic link, the file
// it names) is replaced via a temporary file and rename, so a failed write leaves no partial
// file behind; an existing character device or FIFO (/dev/null, a pipe) is written in place,
// never replaced (a FIFO nobody reads is an error, not a wait); anything else is refused.
Status WriteFileAtomically(const std::string& path, const void* data, size_t size);
// The same for several files (path, bytes): the regular files are all written to temporaries
// before any is replaced, so a failure leaves none changed; devices and FIFOs are written last.
Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);
// The temporary file WriteFileAtomically writes `path` through (next to it, named by the pid).
std::string TemporaryPathFor(const std::string& path);
// Writes `size` bytes to `path` (created or truncated); INVALID_ARGUMENT names the path on failure.
Status WriteFile(const std::string& path, const void* data, size_t size);

}  // namespace hexir

#include "base/file_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hexir {

namespace {

// Opens `path` for reading if it is a regular file; its descriptor and size.
Status OpenRegularFile(const std::string& path, int* fd, size_t* size) {
  *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return NotFoundError("cannot open '", path, "': ", std::strerror(errno));
  struct stat st;
  if (::fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(*fd);
    return InvalidArgumentError("'", path, "' is not a regular file");
  }
  *size = static_cast<size_t>(st.st_size);
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<FileMapping>> FileMapping::Open(const std::string& path) {
  int fd = -1;
  size_t size = 0;
  HEXIR_RETURN_IF_ERROR(OpenRegularFile(path, &fd, &size));
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return ResourceExhaustedError("cannot map '", path, "' (", size, " bytes): ", std::strerror(err));
    }
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::unique_ptr<FileMapping>(new FileMapping(data, size));
}

StatusOr<std::unique_ptr<FileMapping>> FileMapping::Copy(const std::string& path) {
  int fd = -1;
  size_t size = 0;
  HEXIR_RETURN_IF_ERROR(OpenRegularFile(path, &fd, &size));
  if (size == 0) {
    ::close(fd);
    return std::unique_ptr<FileMapping>(new FileMapping(nullptr, 0));
  }
  // Anonymous pages, page-aligned like a mapping of the file, so the reader sees the same layout.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    return ResourceExhaustedError("cannot allocate ", size, " bytes for '", path, "': ", std::strerror(err));
  }
  std::unique_ptr<FileMapping> copy(new FileMapping(data, size));
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(fd, static_cast<unsigned char*>(data) + done, size - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  struct stat after;
  bool changed = ::fstat(fd, &after) != 0 || static_cast<size_t>(after.st_size) != size;
  ::close(fd);
  if (done != size || changed)
    return DataLossError("'", path, "' changed size while it was read (", size, " bytes, then ", done,
                         " read): replace model files by rename");
  ::mprotect(data, size, PROT_READ);
  return copy;
}

FileMapping::~FileMapping() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError("cannot open '", path, "': ", std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return DataLossError("error reading '", path, "'");
  return out;
}

std::string TemporaryPathFor(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

Status WriteFile(const std::string& path, const void* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return InvalidArgumentError("cannot create '", path, "': ", std::strerror(errno));
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(path.c_str());
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const void* data, size_t size) {
  std::string tmp = TemporaryPathFor(path);
  Status written = WriteFile(tmp, data, size);
  if (!written.ok()) return written;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace hexir

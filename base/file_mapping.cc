#include "base/file_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hexir {

namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens `path` for reading if it is a regular file; its descriptor and size. Opened without
// blocking (a FIFO's open would wait for a writer forever) and checked before any read (a
// device such as /dev/zero never ends).
Status OpenRegularFile(const std::string& path, int* fd, size_t* size) {
  *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (*fd < 0) return NotFoundError("cannot open '", path, "': ", std::strerror(errno));
  struct stat st;
  if (::fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno;
    bool stated = ::fstat(*fd, &st) == 0;
    ::close(*fd);
    if (!stated) return InvalidArgumentError("cannot inspect '", path, "': ", std::strerror(err));
    return InvalidArgumentError("'", path, "' is ", KindOf(st.st_mode), ", not a regular file");
  }
  *size = static_cast<size_t>(st.st_size);
  return Status::Ok();
}

// Reads exactly `size` bytes of `fd` from its start into `out`; false if the file ends early.
bool ReadExactly(int fd, unsigned char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(fd, out + done, size - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

// Where an output named `path` goes: a regular file replaced through a temporary (`target`,
// the file a symbolic link names, else `path`), or a character device or FIFO written in place.
enum class OutputKind { kReplace, kInPlace };

StatusOr<OutputKind> ClassifyOutput(const std::string& path, std::string* target) {
  *target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return OutputKind::kReplace;  // a new file
  if (S_ISLNK(st.st_mode)) {
    // Write what the link names, not over the link.
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) != nullptr) {
      *target = resolved;
      if (::stat(resolved, &st) != 0) return OutputKind::kReplace;
    } else {
      return OutputKind::kReplace;  // a dangling link: replaced by the file
    }
  }
  if (S_ISREG(st.st_mode)) return OutputKind::kReplace;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OutputKind::kInPlace;
  return InvalidArgumentError("cannot write '", path, "': it is ", KindOf(st.st_mode),
                              " (outputs go to regular files, character devices or FIFOs)");
}

// Writes into an existing character device or FIFO (/dev/null, /dev/stdout, a pipe) in place.
Status WriteInPlace(const std::string& path, const void* data, size_t size) {
  // Without blocking first: a FIFO no process reads would wait forever.
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO) return InvalidArgumentError("cannot write '", path, "': no process has the FIFO open for reading");
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const auto* p = static_cast<const unsigned char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      return InvalidArgumentError("cannot write '", path, "': ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
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
  bool whole = ReadExactly(fd, static_cast<unsigned char*>(data), size);
  struct stat after;
  bool changed = ::fstat(fd, &after) != 0 || static_cast<size_t>(after.st_size) != size;
  ::close(fd);
  if (!whole || changed)
    return DataLossError("'", path, "' changed size while it was read (", size,
                         " bytes when opened): replace model files by rename");
  ::mprotect(data, size, PROT_READ);
  return copy;
}

FileMapping::~FileMapping() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = -1;
  size_t size = 0;
  HEXIR_RETURN_IF_ERROR(OpenRegularFile(path, &fd, &size));
  std::string out(size, '\0');
  bool whole = ReadExactly(fd, reinterpret_cast<unsigned char*>(out.data()), size);
  ::close(fd);
  if (!whole) return DataLossError("'", path, "' changed size while it was read (", size, " bytes when opened)");
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
  std::string target;
  HEXIR_ASSIGN_OR_RETURN(OutputKind kind, ClassifyOutput(path, &target));
  if (kind == OutputKind::kInPlace) return WriteInPlace(target, data, size);
  std::string tmp = TemporaryPathFor(target);
  Status written = WriteFile(tmp, data, size);
  if (!written.ok()) return written;
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    std::remove(tmp.c_str());
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> targets(files.size()), temporaries;
  std::vector<OutputKind> kinds(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    HEXIR_ASSIGN_OR_RETURN(kinds[i], ClassifyOutput(files[i].first, &targets[i]));
  }
  auto discard = [&] {
    for (const std::string& t : temporaries) std::remove(t.c_str());
  };
  // Every regular file's bytes first, each into its temporary; nothing is replaced until all are.
  for (size_t i = 0; i < files.size(); ++i) {
    if (kinds[i] != OutputKind::kReplace) continue;
    temporaries.push_back(TemporaryPathFor(targets[i]));
    Status written = WriteFile(temporaries.back(), files[i].second.data(), files[i].second.size());
    if (!written.ok()) {
      discard();
      return InvalidArgumentError("cannot write '", files[i].first, "' (no output written): ", written.message());
    }
  }
  size_t next = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (kinds[i] != OutputKind::kReplace) continue;
    if (std::rename(temporaries[next].c_str(), targets[i].c_str()) != 0) {
      int err = errno;
      temporaries.erase(temporaries.begin(), temporaries.begin() + static_cast<std::ptrdiff_t>(next));
      discard();
      return InvalidArgumentError("cannot write '", files[i].first, "': ", std::strerror(err));
    }
    ++next;
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (kinds[i] == OutputKind::kInPlace) HEXIR_RETURN_IF_ERROR(WriteInPlace(targets[i], files[i].second.data(), files[i].second.size()));
  return Status::Ok();
}

}  // namespace hexir

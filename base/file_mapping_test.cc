#include "base/file_mapping.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace hexir {
namespace {

TEST_CASE("FileMapping maps what WriteFileAtomically wrote", "[base]") {
  std::string path = "/tmp/hexir_file_mapping_test." + std::to_string(::getpid());
  const char text[] = "hello hexir";
  REQUIRE(WriteFileAtomically(path, text, sizeof(text)).ok());
  auto mapping = FileMapping::Open(path);
  REQUIRE(mapping.ok());
  REQUIRE((*mapping)->bytes().size() == sizeof(text));
  CHECK(std::memcmp((*mapping)->bytes().data(), text, sizeof(text)) == 0);
  auto contents = ReadFileToString(path);
  REQUIRE(contents.ok());
  CHECK(contents->size() == sizeof(text));
  std::remove(path.c_str());
}

TEST_CASE("FileMapping reports a missing file", "[base]") {
  auto mapping = FileMapping::Open("/nonexistent/hexir/file.hxb");
  REQUIRE_FALSE(mapping.ok());
  CHECK(mapping.status().code() == StatusCode::kNotFound);
  CHECK(mapping.status().message().find("/nonexistent/hexir/file.hxb") != std::string::npos);
}

// A temporary directory of the test's, removed with what it holds.
struct TempDir {
  TempDir() {
    char name[] = "/tmp/hexir_files_XXXXXX";
    path = ::mkdtemp(name) ? name : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

TEST_CASE("only regular files are read: a FIFO, a device, a directory are refused at once", "[base]") {
  TempDir dir;
  REQUIRE(!dir.path.empty());
  std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Each returns at once: no writer is waited for, /dev/zero is not read.
  for (const auto& [path, kind] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "is a FIFO"}, {"/dev/zero", "is a character device"}, {dir.path, "is a directory"}}) {
    CAPTURE(path);
    auto mapped = FileMapping::Open(path);
    REQUIRE_FALSE(mapped.ok());
    CHECK(mapped.status().code() == StatusCode::kInvalidArgument);
    CHECK(mapped.status().message() == "'" + path + "' " + kind + ", not a regular file");
    CHECK(FileMapping::Copy(path).status().message() == mapped.status().message());
    CHECK(ReadFileToString(path).status().message() == mapped.status().message());
  }
}

TEST_CASE("outputs replace regular files, write devices and FIFOs in place, refuse the rest", "[base]") {
  TempDir dir;
  REQUIRE(!dir.path.empty());
  const char text[] = "bytes";
  // /dev/null stays the device: written in place, never replaced by a file.
  REQUIRE(WriteFileAtomically("/dev/null", text, sizeof(text)).ok());
  struct stat st;
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A full device says so.
  if (::access("/dev/full", W_OK) == 0) {
    Status full = WriteFileAtomically("/dev/full", text, sizeof(text));
    CHECK(full.message().find("No space left on device") != std::string::npos);
    REQUIRE(::stat("/dev/full", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  // A FIFO nobody reads is an error at once; one that is read receives the bytes.
  std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Status unread = WriteFileAtomically(fifo, text, sizeof(text));
  CHECK(unread.message() == "cannot write '" + fifo + "': no process has the FIFO open for reading");
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  REQUIRE(WriteFileAtomically(fifo, text, sizeof(text)).ok());
  char got[sizeof(text)] = {};
  CHECK(::read(reader, got, sizeof(got)) == static_cast<ssize_t>(sizeof(text)));
  CHECK(std::memcmp(got, text, sizeof(text)) == 0);
  ::close(reader);
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A directory is refused; a symbolic link's file is replaced, the link stays a link.
  CHECK(WriteFileAtomically(dir.path, text, sizeof(text)).message() ==
        "cannot write '" + dir.path + "': it is a directory (outputs go to regular files, character devices or FIFOs)");
  std::string file = dir.path + "/file", link = dir.path + "/link";
  REQUIRE(WriteFileAtomically(file, "old", 3).ok());
  REQUIRE(::symlink(file.c_str(), link.c_str()) == 0);
  REQUIRE(WriteFileAtomically(link, text, sizeof(text)).ok());
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  auto contents = ReadFileToString(file);
  REQUIRE(contents.ok());
  CHECK(*contents == std::string(text, sizeof(text)));
  // Several files: one refused, none written.
  std::string a = dir.path + "/a";
  CHECK_FALSE(WriteFilesAtomically({{a, "aaa"}, {dir.path, "bbb"}}).ok());
  CHECK(::access(a.c_str(), F_OK) != 0);
  REQUIRE(WriteFilesAtomically({{a, "aaa"}, {"/dev/null", "bbb"}}).ok());
  auto written = ReadFileToString(a);
  REQUIRE(written.ok());
  CHECK(*written == "aaa");
}

}  // namespace
}  // namespace hexir

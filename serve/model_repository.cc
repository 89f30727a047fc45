#include "serve/model_repository.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "serializer/file_format.h"

#include <dirent.h>
#include <sys/stat.h>

namespace hexir::serve {
namespace {

// Why `path` (a file of the folder `root`, itself resolved) cannot be a model, or empty: it must
// resolve inside the folder (a symbolic link may point within it, never out: ONNX external
// data is held to the same rule) to a regular file.
std::string Unusable(const std::string& path, const std::string& root, struct stat* st) {
  if (::stat(path.c_str(), st) != 0) {
    int e = errno;
    if (e == ELOOP) return path + " is a loop of symbolic links";
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return path + " is a symbolic link to nothing";
    return "";  // not there (or gone meanwhile): no model
  }
  if (S_ISDIR(st->st_mode)) return path + " is a directory, not a file";
  if (S_ISFIFO(st->st_mode)) return path + " is a FIFO, not a regular file";
  if (S_ISSOCK(st->st_mode)) return path + " is a socket, not a regular file";
  if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) return path + " is a device, not a regular file";
  if (!S_ISREG(st->st_mode)) return path + " is not a regular file";
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path + " cannot be resolved: " + std::strerror(errno);
  std::string resolved = real;
  std::free(real);
  if (resolved.compare(0, root.size() + 1, root + "/") != 0)
    return path + " resolves to " + resolved + ", outside the model repository " + root;
  return "";
}

// Why the first bytes of a model file say it is no executable, or empty: checked before the
// file is read whole (a sparse 2 GiB file of zeros is refused after 64 bytes).
std::string NotAnExecutable(const std::string& path, uint64_t size) {
  unsigned char header[serializer::kHeaderSize];
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "cannot open " + path + ": " + std::strerror(errno);
  size_t got = std::fread(header, 1, sizeof(header), f);
  std::fclose(f);
  if (got != sizeof(header) || std::memcmp(header, serializer::kMagic, sizeof(serializer::kMagic)) != 0)
    return path + " is not a Hexir executable (no .hxb magic)";
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= static_cast<uint64_t>(header[offsetof(serializer::FileHeader, file_length) + i]) << (8 * i);
  if (length != size)
    return path + " is " + std::to_string(size) + " bytes, but its header says " + std::to_string(length) +
           " (truncated, or still being written)";
  return "";
}

// A model name as the protocol's paths can carry it.
bool IsModelName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

}  // namespace

ModelRepository::ModelRepository(std::string dir, ModelRegistry* registry, double poll_s)
    : dir_(std::move(dir)), registry_(registry), poll_s_(poll_s) {
  Scan();
  if (poll_s_ > 0)
    poller_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(stop_mu_);
      while (!stop_cv_.wait_for(lock, std::chrono::duration<double>(poll_s_), [this] { return stopping_; })) {
        lock.unlock();
        Scan();
        lock.lock();
      }
    });
}

ModelRepository::~ModelRepository() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

ModelRepository::Listing ModelRepository::List() const {
  Listing listing;
  char* real = ::realpath(dir_.c_str(), nullptr);
  DIR* d = real == nullptr ? nullptr : ::opendir(real);
  if (d == nullptr) {
    listing.ok = false;
    listing.error = "cannot read the model repository " + dir_ + ": " + std::strerror(errno);
    std::free(real);
    return listing;
  }
  std::string root = real;
  std::free(real);
  int read_error = 0;
  while (true) {
    errno = 0;  // readdir's end and its failure differ only in errno
    dirent* e = ::readdir(d);
    if (e == nullptr) {
      read_error = errno;
      break;
    }
    std::string entry = e->d_name;
    std::string name, path;
    if (entry.size() > 4 && entry.compare(entry.size() - 4, 4, ".hxb") == 0) {
      name = entry.substr(0, entry.size() - 4);
      path = dir_ + "/" + entry;
    } else {
      name = entry;
      path = dir_ + "/" + entry + "/model.hxb";
    }
    // (A file being written under a temporary name, "x.hxb.tmp", is no model: the rename makes it one.)
    if (!IsModelName(name)) continue;
    struct stat st {};
    std::string why = Unusable(path, root, &st);
    if (!why.empty()) {
      // A NAME/ folder whose model.hxb is a directory is no model folder; NAME.hxb that is no file is refused.
      if (entry != name || why.find("is a directory") == std::string::npos) listing.refused.emplace(name, why);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    Stamp stamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    if (entry == name)
      listing.found.emplace(name, std::make_pair(path, stamp));  // NAME/model.hxb, unless NAME.hxb is there too
    else
      listing.found.insert_or_assign(name, std::make_pair(path, stamp));
  }
  if (read_error != 0) {
    listing.ok = false;
    listing.error = "reading the model repository " + dir_ + " failed: " + std::strerror(read_error);
  }
  ::closedir(d);
  for (const auto& [name, file] : listing.found) listing.refused.erase(name);
  return listing;
}

void ModelRepository::LoadLocked(const std::string& name, const std::string& path, const Stamp& stamp) {
  Entry& entry = entries_[name];
  entry.path = path;
  entry.stamp = stamp;
  // Copied, not mapped: a file of the folder may be overwritten in place (cp onto it). Its
  // header first: a file that is no executable is not read whole.
  std::string bad = NotAnExecutable(path, stamp.size);
  Status loaded = bad.empty() ? registry_->Load(name, path, LoadMode::kCopy) : DataLossError(bad);
  if (loaded.ok()) {
    entry.ready = true;
    entry.reason.clear();
    std::fprintf(stderr, "hexir-serve: model '%s' loaded from %s\n", name.c_str(), path.c_str());
  } else {
    entry.reason = loaded.message();
    std::fprintf(stderr, "hexir-serve: model '%s' not loaded from %s: %s%s\n", name.c_str(), path.c_str(),
                 entry.reason.c_str(), entry.ready ? " (the version before goes on serving)" : "");
  }
}

void ModelRepository::Scan() {
  Listing now = List();
  std::lock_guard<std::mutex> lock(mu_);
  if (!now.ok) {
    // Unknown, not gone: everything loaded goes on serving; the next poll tries again.
    if (now.error != list_error_)
      std::fprintf(stderr, "hexir-serve: %s; models stay as they are until it can be read\n", now.error.c_str());
    list_error_ = now.error;
    return;
  }
  if (!list_error_.empty()) std::fprintf(stderr, "hexir-serve: the model repository %s can be read again\n", dir_.c_str());
  list_error_.clear();
  for (const auto& [name, file] : now.found) {
    auto it = entries_.find(name);
    if (it == entries_.end() || !(it->second.stamp == file.second) || it->second.path != file.first)
      LoadLocked(name, file.first, file.second);
  }
  for (const auto& [name, why] : now.refused) {
    Entry& entry = entries_[name];
    if (entry.reason == why) continue;
    entry.reason = why;
    entry.stamp = Stamp{};  // a good file put back later loads again
    std::fprintf(stderr, "hexir-serve: model '%s' not loaded: %s%s\n", name.c_str(), why.c_str(),
                 entry.ready ? " (the version before goes on serving)" : "");
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now.found.count(it->first) || now.refused.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.ready) {
      registry_->Unload(it->first);
      std::fprintf(stderr, "hexir-serve: model '%s' unloaded: %s is gone\n", it->first.c_str(), it->second.path.c_str());
    }
    it = entries_.erase(it);
  }
}

nlohmann::json ModelRepository::Index() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json index = nlohmann::json::array();
  for (const auto& [name, entry] : entries_) {
    bool serving = registry_->Find(name) != nullptr;
    nlohmann::json item = {{"name", name}, {"version", "1"}, {"state", serving ? "READY" : "UNAVAILABLE"}};
    if (!entry.reason.empty()) item["reason"] = entry.reason;
    else if (!serving) item["reason"] = "unloaded";
    index.push_back(item);
  }
  return index;
}

std::string ModelRepository::Unready() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, entry] : entries_)
    if (!entry.reason.empty() && registry_->Find(name) == nullptr)
      return "model '" + name + "' is not loaded: " + entry.reason;
  return "";
}

Status ModelRepository::Load(const std::string& name) {
  Listing listing = List();
  if (!listing.ok) return FailedPreconditionError(listing.error);
  if (auto refused = listing.refused.find(name); refused != listing.refused.end())
    return InvalidArgumentError(refused->second);
  std::map<std::string, std::pair<std::string, Stamp>>& now = listing.found;
  auto it = now.find(name);
  if (it == now.end())
    return NotFoundError("the model repository ", dir_, " has no model '", name, "' (", name, ".hxb or ", name,
                         "/model.hxb)");
  std::lock_guard<std::mutex> lock(mu_);
  LoadLocked(name, it->second.first, it->second.second);
  const Entry& entry = entries_[name];
  if (!entry.reason.empty()) return InvalidArgumentError(entry.reason);
  return Status::Ok();
}

Status ModelRepository::Unload(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!registry_->Unload(name)) return NotFoundError("model '", name, "' is not loaded");
  // Kept in the index, unavailable, until loaded again; a poll does not bring it back unless
  // its file changes.
  entries_[name].ready = false;
  return Status::Ok();
}

}  // namespace hexir::serve

#include "serve/model_repository.h"

#include <cctype>
#include <chrono>
#include <cstdio>

#include <dirent.h>
#include <sys/stat.h>

namespace hexir::serve {
namespace {

bool StatFile(const std::string& path, struct stat* st) {
  return ::stat(path.c_str(), st) == 0 && S_ISREG(st->st_mode);
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

std::map<std::string, std::pair<std::string, ModelRepository::Stamp>> ModelRepository::List() const {
  std::map<std::string, std::pair<std::string, Stamp>> found;
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return found;
  while (dirent* e = ::readdir(d)) {
    std::string entry = e->d_name;
    std::string name, path;
    if (entry.size() > 4 && entry.compare(entry.size() - 4, 4, ".hxb") == 0) {
      name = entry.substr(0, entry.size() - 4);
      path = dir_ + "/" + entry;
    } else {
      name = entry;
      path = dir_ + "/" + entry + "/model.hxb";
    }
    struct stat st {};
    // (A file being written under a temporary name, "x.hxb.tmp", is no model: the rename makes it one.)
    if (!IsModelName(name) || !StatFile(path, &st)) continue;
    Stamp stamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    if (entry == name)
      found.emplace(name, std::make_pair(path, stamp));  // NAME/model.hxb, unless NAME.hxb is there too
    else
      found.insert_or_assign(name, std::make_pair(path, stamp));
  }
  ::closedir(d);
  return found;
}

void ModelRepository::LoadLocked(const std::string& name, const std::string& path, const Stamp& stamp) {
  Entry& entry = entries_[name];
  entry.path = path;
  entry.stamp = stamp;
  // Copied, not mapped: a file of the folder may be overwritten in place (cp onto it).
  Status loaded = registry_->Load(name, path, LoadMode::kCopy);
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
  std::map<std::string, std::pair<std::string, Stamp>> now = List();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, file] : now) {
    auto it = entries_.find(name);
    if (it == entries_.end() || !(it->second.stamp == file.second) || it->second.path != file.first)
      LoadLocked(name, file.first, file.second);
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now.count(it->first)) {
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

Status ModelRepository::Load(const std::string& name) {
  std::map<std::string, std::pair<std::string, Stamp>> now = List();
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

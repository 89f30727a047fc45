// ModelRepository: a folder of models (`--model-repository DIR`; KServe mounts models at
// /mnt/models): each `NAME.hxb`, or `NAME/model.hxb`, is model NAME. Every model is loaded at
// start; a poll (every `poll_s`) loads what appeared, reloads what changed (another file under
// the name: a new version moved in by rename, or a file rewritten: its device, inode, size or
// modification time differ) and unloads what was removed. The repository extension's endpoints
// act on it: index, load, unload. A file that does not load is reported (stderr and the index)
// and skipped: the model keeps serving its last good version, and the server never stops for it.
// A file the folder holds but that is no regular file inside the folder (a symbolic link
// leaving it, a FIFO, a device, ...) is refused the same way, with the reason. A folder that
// cannot be read is "unknown", never "gone": what is loaded goes on serving, and the next poll
// tries again.
//
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "serve/model_registry.h"

namespace hexir::serve {

class ModelRepository {
 public:
  // Scans `dir` once (loading every model), then polls it every `poll_s` seconds (0: never) on
  // its own thread until destroyed. `registry` outlives the repository.
  ModelRepository(std::string dir, ModelRegistry* registry, double poll_s);
  ~ModelRepository();

  // POST /v2/repository/index: every model of the folder and every one loaded from it, with
  // its state (READY, UNAVAILABLE) and, for a file that failed, the reason.
  nlohmann::json Index() const;
  // POST /v2/repository/models/NAME/load: (re)loads NAME from the folder (NOT_FOUND when the
  // folder has no such model; the load's error otherwise, the model serving as before).
  Status Load(const std::string& name);
  // POST /v2/repository/models/NAME/unload: NOT_FOUND when NAME is not loaded.
  Status Unload(const std::string& name);
  // Why the server is not ready (strict readiness, as Triton's): the first model of the folder
  // that failed to load and serves no version; "" when every one serves (a model unloaded on
  // request does not count).
  std::string Unready() const;

  // One poll: what the folder holds now against what was loaded.
  void Scan();

 private:
  // A model file as last seen: what identifies its contents without reading them.
  struct Stamp {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp& o) const {
      return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
    }
  };
  struct Entry {
    std::string path;
    Stamp stamp;        // of the file last tried
    bool ready = false;  // the registry serves a version of it
    std::string reason;  // why the last try failed
  };

  // What the folder holds now: NAME -> its file for every model file that can be loaded, and
  // NAME -> why for names whose file cannot (a symbolic link out of the folder, a FIFO, a
  // device, a directory, a dangling or looping link). `ok` is false when the folder itself
  // could not be read (descriptors exhausted, the mount gone for a moment): nothing is known
  // then, and nothing is unloaded.
  struct Listing {
    bool ok = true;
    std::string error;
    std::map<std::string, std::pair<std::string, Stamp>> found;
    std::map<std::string, std::string> refused;
  };
  Listing List() const;
  // Loads `path` as `name`, recording the outcome in entries_ (mu_ held by the caller).
  void LoadLocked(const std::string& name, const std::string& path, const Stamp& stamp);

  std::string dir_;
  ModelRegistry* registry_;
  double poll_s_;
  mutable std::mutex mu_;  // entries_, and one load at a time
  std::map<std::string, Entry> entries_;
  std::string list_error_;  // the last poll's error reading the folder (logged once)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace hexir::serve

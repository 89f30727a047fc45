//===- Machine.cpp - machine descriptions: memory spaces and processors ---===//
#include "Target/Machine.h"

#include "base/file_mapping.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "Target/MachinePresets.inc"

using namespace mlir;
using namespace mlir::hexir;
namespace json = llvm::json;

namespace {

// Reads field `key` of `object` as a string / non-negative integer / number; sets `error`.
bool getString(const json::Object &object, llvm::StringRef key, std::string &out, std::string &error,
               llvm::StringRef where, bool required = true) {
  const json::Value *v = object.get(key);
  if (!v)
    return !required || (error = (where + ": missing \"" + key + "\"").str(), false);
  std::optional<llvm::StringRef> s = v->getAsString();
  if (!s || s->empty())
    return error = (where + ": \"" + key + "\" must be a non-empty string").str(), false;
  out = s->str();
  return true;
}

bool getBytes(const json::Object &object, llvm::StringRef key, uint64_t &out, std::string &error,
              llvm::StringRef where) {
  const json::Value *v = object.get(key);
  if (!v)
    return true;  // the default
  std::optional<int64_t> n = v->getAsInteger();
  if (!n || *n < 0)
    return error = (where + ": \"" + key + "\" must be a whole number of bytes, 0 or more").str(), false;
  out = static_cast<uint64_t>(*n);
  return true;
}

bool getNumber(const json::Object &object, llvm::StringRef key, double &out, std::string &error,
               llvm::StringRef where, bool required = true) {
  const json::Value *v = object.get(key);
  if (!v && !required)
    return true;  // the default
  std::optional<double> d = v ? v->getAsNumber() : std::nullopt;
  if (!d || *d < 0)
    return error = (where + ": \"" + key + "\" must be a number, 0 or more").str(), false;
  out = *d;
  return true;
}

} // namespace

FailureOr<MachineDescription> mlir::hexir::parseMachine(llvm::StringRef text, llvm::StringRef source,
                                                        std::string &error) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = (source + ": not valid JSON: " + llvm::toString(parsed.takeError())).str();
    return failure();
  }
  const json::Object *root = parsed->getAsObject();
  if (!root) {
    error = (source + ": a machine file is a JSON object").str();
    return failure();
  }
  MachineDescription m;
  if (!getString(*root, "name", m.name, error, source))
    return failure();
  const json::Array *processors = root->getArray("processors");
  const json::Array *spaces = root->getArray("memory_spaces");
  if (!processors || processors->empty() || !spaces || spaces->empty()) {
    error = (source + ": needs non-empty \"processors\" and \"memory_spaces\" arrays").str();
    return failure();
  }
  llvm::StringSet<> processorNames, spaceNames;
  for (auto [i, p] : llvm::enumerate(*processors)) {
    std::string where = (source + ": processor " + llvm::Twine(i)).str();
    const json::Object *o = p.getAsObject();
    MachineProcessor proc;
    if (!o) {
      error = where + ": not an object";
      return failure();
    }
    if (!getString(*o, "name", proc.name, error, where) || !getString(*o, "kind", proc.kind, error, where) ||
        !getNumber(*o, "flops_per_second", proc.flopsPerSecond, error, where, /*required=*/false) ||
        !getNumber(*o, "bytes_per_second", proc.bytesPerSecond, error, where, /*required=*/false))
      return failure();
    if (proc.kind != "host" && proc.kind != "cuda") {
      error = where + " ('" + proc.name + "'): kind '" + proc.kind + "' is not \"host\" or \"cuda\"";
      return failure();
    }
    if (!processorNames.insert(proc.name).second) {
      error = where + ": processor '" + proc.name + "' is named twice";
      return failure();
    }
    m.processors.push_back(proc);
  }
  for (auto [i, s] : llvm::enumerate(*spaces)) {
    std::string where = (source + ": memory space " + llvm::Twine(i)).str();
    const json::Object *o = s.getAsObject();
    MachineMemorySpace space;
    if (!o) {
      error = where + ": not an object";
      return failure();
    }
    if (!getString(*o, "name", space.name, error, where) || !getBytes(*o, "capacity", space.capacity, error, where) ||
        !getBytes(*o, "alignment", space.alignment, error, where) ||
        !getString(*o, "within", space.within, error, where, /*required=*/false))
      return failure();
    where += " ('" + space.name + "')";
    if (space.alignment == 0 || (space.alignment & (space.alignment - 1)) != 0 || space.alignment > 4096) {
      error = where + ": alignment " + std::to_string(space.alignment) + " is not a power of two up to 4096";
      return failure();
    }
    const json::Array *visible = o->getArray("visible_to");
    if (!visible || visible->empty()) {
      error = where + ": \"visible_to\" must list the processors that see it";
      return failure();
    }
    for (const json::Value &v : *visible) {
      std::optional<llvm::StringRef> name = v.getAsString();
      if (!name || !processorNames.contains(*name)) {
        error = where + ": \"visible_to\" names '" + (name ? name->str() : std::string("?")) +
                "', which is not a processor of the machine";
        return failure();
      }
      space.visibleTo.push_back(name->str());
    }
    if (!spaceNames.insert(space.name).second) {
      error = where + ": memory space '" + space.name + "' is named twice";
      return failure();
    }
    m.memorySpaces.push_back(space);
  }
  for (const MachineMemorySpace &space : m.memorySpaces)
    if (!space.within.empty() && (!spaceNames.contains(space.within) || space.within == space.name)) {
      error = (source + ": memory space '" + space.name + "' lies within '" + space.within +
               "', which is not another memory space of the machine")
                  .str();
      return failure();
    }
  if (const json::Array *transfers = root->getArray("transfers")) {
    for (auto [i, t] : llvm::enumerate(*transfers)) {
      std::string where = (source + ": transfer " + llvm::Twine(i)).str();
      const json::Object *o = t.getAsObject();
      MachineTransfer transfer;
      if (!o) {
        error = where + ": not an object";
        return failure();
      }
      if (!getString(*o, "from", transfer.from, error, where) || !getString(*o, "to", transfer.to, error, where) ||
          !getNumber(*o, "bytes_per_second", transfer.bytesPerSecond, error, where) ||
          !getNumber(*o, "latency_seconds", transfer.latencySeconds, error, where))
        return failure();
      if (!spaceNames.contains(transfer.from) || !spaceNames.contains(transfer.to)) {
        error = where + ": from '" + transfer.from + "' to '" + transfer.to + "' names a space the machine lacks";
        return failure();
      }
      m.transfers.push_back(transfer);
    }
  }
  return m;
}

std::vector<std::string> mlir::hexir::machinePresetNames() {
  std::vector<std::string> names;
  for (const MachinePreset &p : kMachinePresets)
    names.push_back(p.name);
  return names;
}

FailureOr<MachineDescription> mlir::hexir::loadMachine(llvm::StringRef nameOrPath, std::string &error) {
  if (!nameOrPath.contains('/') && !nameOrPath.ends_with(".json")) {
    for (const MachinePreset &p : kMachinePresets)
      if (nameOrPath == p.name)
        return parseMachine(p.json, ("machine preset '" + nameOrPath + "'").str(), error);
    error = "unknown machine '" + nameOrPath.str() + "' (presets: " + llvm::join(machinePresetNames(), ", ") +
            "; or give a path to a machine file)";
    return failure();
  }
  // A regular file only (a FIFO or a device would block or never end).
  ::hexir::StatusOr<std::string> text = ::hexir::ReadFileToString(nameOrPath.str());
  if (!text.ok()) {
    error = "cannot read machine file: " + text.status().message();
    return failure();
  }
  return parseMachine(*text, nameOrPath, error);
}

namespace {

// Whether a processor of kind `kind` ("host", "cuda") sees memory space `space`.
bool seenBy(const MachineDescription &machine, const MachineMemorySpace &space, llvm::StringRef kind) {
  return llvm::any_of(space.visibleTo, [&](const std::string &p) {
    return llvm::any_of(machine.processors, [&](const MachineProcessor &q) { return q.name == p && q.kind == kind; });
  });
}

// The rates of the runtime's own copies between the host's memory (a space only host processors
// see, such as a GPU machine's DRAM) and the arena's space.
void linkToHost(TargetDescription &target, const MachineDescription &machine) {
  target.hostLink = {};
  const std::string &arena = target.memorySpaces[target.arenaSpace].name;
  auto kernelSees = [&](const std::string &name) {
    return llvm::any_of(target.memorySpaces,
                        [&](const MemorySpaceDescription &s) { return s.name == name && s.kernelVisible; });
  };
  auto hostOnly = [&](const std::string &name) {
    return !kernelSees(name) && llvm::any_of(machine.memorySpaces, [&](const MachineMemorySpace &s) {
      return s.name == name && s.within.empty() && seenBy(machine, s, "host");
    });
  };
  for (const MachineTransfer &t : machine.transfers) {
    if (hostOnly(t.from) && t.to == arena) {
      target.hostLink.uploadBytesPerSecond = t.bytesPerSecond;
      target.hostLink.uploadLatencySeconds = t.latencySeconds;
    } else if (t.from == arena && hostOnly(t.to)) {
      target.hostLink.downloadBytesPerSecond = t.bytesPerSecond;
      target.hostLink.downloadLatencySeconds = t.latencySeconds;
    }
  }
}

} // namespace

LogicalResult mlir::hexir::applyMachine(TargetDescription &target, const MachineDescription &machine,
                                        llvm::StringRef processorKind, std::string &error) {
  llvm::StringSet<> processors;
  target.compute = {};
  for (const MachineProcessor &p : machine.processors)
    if (p.kind == processorKind && processors.insert(p.name).second && processors.size() == 1) {
      target.compute = {p.flopsPerSecond, p.bytesPerSecond};  // the first such processor runs the kernels
      target.processorName = p.name;
    }
  if (processors.empty()) {
    error = "machine '" + machine.name + "' has no " + processorKind.str() + " processor for target '" + target.name + "'";
    return failure();
  }
  // Spaces within another (a GPU's shared memory) hold a kernel's scratch, not arenas.
  std::vector<MemorySpaceDescription> spaces;
  for (const MachineMemorySpace &s : machine.memorySpaces) {
    if (!s.within.empty() || llvm::none_of(s.visibleTo, [&](const std::string &p) { return processors.contains(p); }))
      continue;
    spaces.push_back({s.name, s.capacity, std::max<uint64_t>(s.alignment, 64), seenBy(machine, s, "host"), true});
  }
  if (spaces.empty()) {
    error = "machine '" + machine.name + "' has no memory space its " + processorKind.str() + " processor sees";
    return failure();
  }
  target.memorySpaces = std::move(spaces);
  target.arenaSpace = 0;
  target.constantSpace = static_cast<uint32_t>(target.memorySpaces.size() - 1);
  target.transfers.clear();
  auto indexOf = [&](const std::string &name) -> std::optional<uint32_t> {
    for (uint32_t i = 0; i < target.memorySpaces.size(); ++i)
      if (target.memorySpaces[i].name == name)
        return i;
    return std::nullopt;
  };
  for (const MachineTransfer &t : machine.transfers) {
    std::optional<uint32_t> from = indexOf(t.from), to = indexOf(t.to);
    if (from && to && *from != *to)
      target.transfers.push_back({*from, *to, t.bytesPerSecond, t.latencySeconds});
  }
  linkToHost(target, machine);
  return success();
}

LogicalResult mlir::hexir::placeBuffers(TargetDescription &target, const MachineDescription *machine,
                                        const std::map<std::string, std::string> &placements, std::string &error) {
  auto indexOf = [&](llvm::StringRef name) -> std::optional<uint32_t> {
    for (uint32_t i = 0; i < target.memorySpaces.size(); ++i)
      if (target.memorySpaces[i].name == name)
        return i;
    return std::nullopt;
  };
  for (const auto &[what, spaceName] : placements) {
    if (what != "intermediates" && what != "constants") {
      error = "--place " + what + "=" + spaceName + ": what is placed is 'intermediates' or 'constants'";
      return failure();
    }
    std::optional<uint32_t> index = indexOf(spaceName);
    if (!index && machine) {
      // A space of the machine the target's processor does not see (applyMachine left it out).
      const MachineMemorySpace *space = nullptr;
      for (const MachineMemorySpace &s : machine->memorySpaces)
        if (s.name == spaceName)
          space = &s;
      if (space && !space->within.empty()) {
        error = "--place " + what + "=" + spaceName + ": memory space '" + spaceName + "' lies within '" +
                space->within + "' and holds a kernel's scratch, never " + what;
        return failure();
      }
      if (space) {
        index = static_cast<uint32_t>(target.memorySpaces.size());
        target.memorySpaces.push_back({space->name, space->capacity, std::max<uint64_t>(space->alignment, 64),
                                       seenBy(*machine, *space, "host"), false});
        for (const MachineTransfer &t : machine->transfers) {
          std::optional<uint32_t> from = indexOf(t.from), to = indexOf(t.to);
          if (from && to && *from != *to && (*from == *index || *to == *index))
            target.transfers.push_back({*from, *to, t.bytesPerSecond, t.latencySeconds});
        }
      }
    }
    if (!index) {
      std::string known;
      if (machine) {
        for (const MachineMemorySpace &s : machine->memorySpaces)
          if (s.within.empty())
            known += (known.empty() ? "'" : ", '") + s.name + "'";
      } else {
        for (const MemorySpaceDescription &s : target.memorySpaces)
          known += (known.empty() ? "'" : ", '") + s.name + "'";
      }
      error = "--place " + what + "=" + spaceName + ": no memory space '" + spaceName + "' in " +
              (machine ? "machine '" + machine->name + "' (it has " + known + ")"
                       : "target '" + target.name + "' (it has " + known + "; a machine file, --machine, gives others)");
      return failure();
    }
    (what == "intermediates" ? target.arenaSpace : target.constantSpace) = *index;
  }
  if (machine)
    linkToHost(target, *machine);  // the arena may have moved
  return success();
}

uint64_t mlir::hexir::kernelScratchBytes(const MachineDescription &machine, llvm::StringRef processorKind) {
  uint64_t bytes = 0;
  for (const MachineMemorySpace &s : machine.memorySpaces) {
    if (!s.within.empty() && seenBy(machine, s, processorKind) && s.capacity > 0 && (bytes == 0 || s.capacity < bytes))
      bytes = s.capacity;
  }
  return bytes;
}

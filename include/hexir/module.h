// Module: a loaded executable, the load phase. Load() maps the file, verifies it once
// (structure, checksums, every slot inside its memory space, every dispatch's arity, every
// kernel symbol present), loads the kernels, and makes the constants resident: on the host
// they are used in place from the mapping, so loading does not read the weights. Splat
// constants are filled once, here.
//
// Ownership: shared; every Session keeps its Module alive. The Runtime must outlive it.
// Thread safety: immutable after Load(); share it freely across threads.
#pragma once

#include "hexir/export.h"
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hexir/runtime.h"
#include "hexir/status.h"
#include "hexir/types.h"

namespace hexir {

namespace vm {
class Module;
}  // namespace vm

// How a Module holds its file.
enum class LoadMode {
  // Zero-copy (default): the file is mapped and its weights are used in place. Replace a
  // loaded file only by rename (as hexir-compile writes it): truncating it in place makes the
  // next run die with SIGBUS, overwriting it in place changes the running model's weights.
  kMap,
  // The file is read into private memory at load: the Module never sees later changes of the
  // file (a truncation, `cp new.hxb model.hxb`), at the cost of a copy of the file in memory.
  kCopy,
};

struct ModuleOptions {
  bool verify_weights = false;  // also checksum the constant pool (reads every weight once)
  LoadMode load_mode = LoadMode::kMap;
};

class HEXIR_API Module {
 public:
  // NOT_FOUND (no such file), DATA_LOSS (corrupt), UNIMPLEMENTED (newer format), ...; the
  // message names the file and what is wrong.
  static StatusOr<std::shared_ptr<const Module>> Load(const Runtime& runtime, const std::string& path,
                                                      const ModuleOptions& options = {});
  ~Module();

  std::vector<std::string> function_names() const;
  // The signature of `function` (a model compiled as shape buckets: its smallest bucket's);
  // NOT_FOUND names the functions there are.
  StatusOr<std::vector<TensorInfo>> inputs(const std::string& function = "main") const;
  StatusOr<std::vector<TensorInfo>> outputs(const std::string& function = "main") const;
  uint64_t file_bytes() const;
  // The memory plan the compiler made for `function`, as JSON (arena, lower bound, buffers);
  // NOT_FOUND for an unknown function, "{}" for an executable without one.
  StatusOr<std::string> plan_json(const std::string& function) const;
  uint64_t constant_bytes() const;  // stored constants plus filled splats
  // Why the rows of `function` interact, for a model compiled as shape buckets whose rows the
  // compiler could not prove independent (a Softmax over the batch): such a model runs only at
  // its buckets' exact sizes, never padded, and must not be batched across requests. Empty
  // when rows are independent, or for a function that is not shape buckets.
  std::string rows_mixed_by(const std::string& function = "main") const;
  // What the model says of itself, as compiled from it: an ONNX model's metadata_props, and
  // "onnx:producer_name", "onnx:producer_version", "onnx:domain", "onnx:graph_name",
  // "onnx:description", "onnx:version" where set; in key order.
  std::vector<std::pair<std::string, std::string>> metadata() const;

  const vm::Module& impl() const { return *impl_; }

 private:
  explicit Module(std::unique_ptr<vm::Module> impl);
  std::unique_ptr<vm::Module> impl_;
};

}  // namespace hexir

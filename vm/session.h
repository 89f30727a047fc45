// Session: the execute phase of one function of a Module. Create() allocates the arena and
// every scratch structure once; Run() binds the caller's inputs (zero-copy: kernels read them
// in place and never write them) and outputs (kernels write results straight into them),
// replays the function's commands and makes no heap allocation.
//
// Ownership: a Session keeps its Module alive. Thread safety: thread-compatible; use one
// Session per thread (many Sessions may share one Module).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/span.h"
#include "base/status.h"
#include "vm/module.h"
#include "vm/tensor.h"

namespace hexir {

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Module> module,
                                                   const std::string& function = "main");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const serializer::fb::Function& function() const { return *function_; }
  uint64_t arena_bytes() const { return function_->arena_bytes(); }

  // Runs the function. `inputs` and `outputs` are in signature order; each must match its
  // signature's element type and shape exactly (INVALID_ARGUMENT names expected and actual).
  Status Run(Span<const TensorView> inputs, Span<const MutableTensorView> outputs);

 private:
  Session(std::shared_ptr<const Module> module, const serializer::fb::Function* function)
      : module_(std::move(module)), function_(function) {}
  Status CheckBindings(Span<const TensorView> inputs, Span<const MutableTensorView> outputs) const;

  std::shared_ptr<const Module> module_;
  const serializer::fb::Function* function_;
  hal::DevicePtr arena_ = nullptr;
  // Scratch reused by every Run(): per-space base pointers and a dispatch's bindings.
  std::vector<hal::DevicePtr> input_bases_, output_bases_, bindings_;
};

}  // namespace hexir

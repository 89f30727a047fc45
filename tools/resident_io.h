// `hexir-run --resident`: a run's inputs and outputs in memory of the runtime's device
// (hexir::DeviceBuffer) instead of the caller's host memory, so that a GPU's runs read and
// write them in place and a benchmark times the kernels without the host round trip. Inputs
// are copied in once; outputs are copied back on request.
#pragma once

#include <memory>
#include <vector>

#include "hexir/device_buffer.h"
#include "hexir/runtime.h"
#include "hexir/session.h"

namespace hexir::tools {

class ResidentIo {
 public:
  // Device buffers for `inputs` (their bytes copied in) and `outputs`; an output bound onto an
  // input's host buffer (--in-place) is bound onto that input's device buffer.
  static StatusOr<std::unique_ptr<ResidentIo>> Create(const Runtime& runtime,
                                                      Span<const TensorView> inputs,
                                                      Span<const MutableTensorView> outputs);
  Span<const TensorView> inputs() const { return Span<const TensorView>(inputs_); }
  Span<const MutableTensorView> outputs() const { return Span<const MutableTensorView>(outputs_); }
  // Copies each output back into the host buffer it was made for.
  Status CopyOutputsToHost(Span<const MutableTensorView> host_outputs) const;

 private:
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;  // per input, then per output (null: in place)
  std::vector<TensorView> inputs_;
  std::vector<MutableTensorView> outputs_;
  std::vector<uint64_t> output_bytes_;
};

}  // namespace hexir::tools

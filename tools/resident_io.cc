#include "tools/resident_io.h"

namespace hexir::tools {

StatusOr<std::unique_ptr<ResidentIo>> ResidentIo::Create(const Runtime& runtime,
                                                         Span<const TensorView> inputs,
                                                         Span<const MutableTensorView> outputs) {
  auto io = std::make_unique<ResidentIo>();
  // Sized as the caller's tensors are (a session of shape buckets takes other sizes than its
  // signature's).
  auto bytes_of = [](ElementType type, Span<const int64_t> shape) {
    uint64_t bytes = ElementTypeSize(type);
    for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
    return bytes;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint64_t bytes = bytes_of(inputs[i].element_type, inputs[i].shape);
    HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, DeviceBuffer::Allocate(runtime, bytes));
    HEXIR_RETURN_IF_ERROR(buffer->CopyFromHost(inputs[i].data, bytes));
    TensorView view = inputs[i];
    view.data = buffer->data();
    view.location = MemoryLocation::kDevice;
    io->inputs_.push_back(view);
    io->buffers_.push_back(std::move(buffer));
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    MutableTensorView view = outputs[o];
    view.location = MemoryLocation::kDevice;
    std::unique_ptr<DeviceBuffer> buffer;
    size_t tied = 0;
    while (tied < inputs.size() && inputs[tied].data != outputs[o].data) ++tied;
    if (tied < inputs.size()) {
      view.data = io->buffers_[tied]->data();
    } else {
      HEXIR_ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(runtime, bytes_of(view.element_type, view.shape)));
      view.data = buffer->data();
    }
    io->outputs_.push_back(view);
    io->output_bytes_.push_back(bytes_of(view.element_type, view.shape));
    io->buffers_.push_back(std::move(buffer));
  }
  return io;
}

Status ResidentIo::CopyOutputsToHost(Span<const MutableTensorView> host_outputs) const {
  for (size_t o = 0; o < host_outputs.size(); ++o) {
    const DeviceBuffer* buffer = buffers_[inputs_.size() + o].get();
    // In place: the output lives in its input's buffer.
    if (buffer == nullptr)
      for (size_t i = 0; i < inputs_.size(); ++i)
        if (inputs_[i].data == outputs_[o].data) buffer = buffers_[i].get();
    if (buffer == nullptr) return InternalError("output ", o, " has no device buffer");
    HEXIR_RETURN_IF_ERROR(buffer->CopyToHost(host_outputs[o].data, output_bytes_[o]));
  }
  return Status::Ok();
}

}  // namespace hexir::tools

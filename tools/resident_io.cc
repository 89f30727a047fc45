#include "tools/resident_io.h"

namespace hexir::tools {

StatusOr<std::unique_ptr<ResidentIo>> ResidentIo::Create(const Runtime& runtime, const Session& session,
                                                         Span<const TensorView> inputs,
                                                         Span<const MutableTensorView> outputs) {
  auto io = std::make_unique<ResidentIo>();
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint64_t bytes = session.inputs()[i].byte_size;
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
      HEXIR_ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(runtime, session.outputs()[o].byte_size));
      view.data = buffer->data();
    }
    io->outputs_.push_back(view);
    io->output_bytes_.push_back(session.outputs()[o].byte_size);
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

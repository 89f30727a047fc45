#include "serve/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <vector>
#include <functional>
#include <deque>
#include <new>
#include <mutex>
#include <thread>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include "grpc_service.grpc.pb.h"
#include "serve/protocol.h"

namespace hexir::serve {
namespace {

using Clock = std::chrono::steady_clock;
namespace pb = ::inference;

grpc::Status Refuse(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

grpc::StatusCode CodeOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kNotFound: return grpc::StatusCode::NOT_FOUND;
    case StatusCode::kResourceExhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case StatusCode::kFailedPrecondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kDeadlineExceeded: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case StatusCode::kCancelled: return grpc::StatusCode::CANCELLED;
    default: return grpc::StatusCode::INTERNAL;
  }
}

// The values of `contents` for a tensor of `t`'s type, `elements` of them, as its bytes; false
// with the reason when they are missing, too few or too many, or out of the type's range.
bool FromContents(const pb::InferTensorContents& c, const TensorInfo& t, uint64_t elements,
                  std::vector<unsigned char>* bytes, std::string* why) {
  bytes->assign(t.byte_size, 0);
  auto fill = [&](const auto& values, auto convert) {
    if (static_cast<uint64_t>(values.size()) != elements) {
      *why = "has " + std::to_string(values.size()) + " values in its contents; its shape takes " +
             std::to_string(elements);
      return false;
    }
    for (uint64_t i = 0; i < elements; ++i)
      if (!convert(values[static_cast<int>(i)], bytes->data() + i * ElementTypeSize(t.element_type))) {
        *why = "value " + std::to_string(i) + " is out of the range of " + DatatypeName(t.element_type);
        return false;
      }
    return true;
  };
  auto as = [](auto value, auto lo, auto hi, auto* out) {
    if (value < lo || value > hi) return false;
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(value);
    return true;
  };
  switch (t.element_type) {
    case ElementType::kF32:
      return fill(c.fp32_contents(), [](float v, unsigned char* p) { std::memcpy(p, &v, 4); return true; });
    case ElementType::kF64:
      return fill(c.fp64_contents(), [](double v, unsigned char* p) { std::memcpy(p, &v, 8); return true; });
    case ElementType::kI64:
      return fill(c.int64_contents(), [](int64_t v, unsigned char* p) { std::memcpy(p, &v, 8); return true; });
    case ElementType::kI32:
      return fill(c.int_contents(), [](int32_t v, unsigned char* p) { std::memcpy(p, &v, 4); return true; });
    case ElementType::kI16:
      return fill(c.int_contents(), [&](int32_t v, unsigned char* p) {
        return as(v, -32768, 32767, reinterpret_cast<int16_t*>(p));
      });
    case ElementType::kI8:
      return fill(c.int_contents(), [&](int32_t v, unsigned char* p) {
        return as(v, -128, 127, reinterpret_cast<int8_t*>(p));
      });
    case ElementType::kU8:
      return fill(c.uint_contents(), [&](uint32_t v, unsigned char* p) { return as(v, 0u, 255u, p); });
    case ElementType::kU16:
      return fill(c.uint_contents(), [&](uint32_t v, unsigned char* p) {
        return as(v, 0u, 65535u, reinterpret_cast<uint16_t*>(p));
      });
    case ElementType::kU32:
      return fill(c.uint_contents(), [](uint32_t v, unsigned char* p) { std::memcpy(p, &v, 4); return true; });
    case ElementType::kU64:
      return fill(c.uint64_contents(), [](uint64_t v, unsigned char* p) { std::memcpy(p, &v, 8); return true; });
    case ElementType::kBool:
      return fill(c.bool_contents(), [](bool v, unsigned char* p) { *p = v ? 1 : 0; return true; });
    default:
      *why = std::string("has type ") + DatatypeName(t.element_type) + ", which gRPC contents do not carry here; send raw bytes";
      return false;
  }
}

// A gRPC request as the REST server's InferRequest: every input once, of its model's type and
// shape (with batching: 1 to max_batch rows, the same for all), its bytes from raw_input_contents
// (one entry per input, in the request's order) or from its contents.
grpc::Status ParseRequest(const pb::ModelInferRequest& req, std::vector<std::vector<unsigned char>>& raws,
                          const ModelSignature& model, InferRequest* out) {
  const std::vector<TensorInfo>& declared = model.inputs();
  out->inputs.assign(declared.size(), {});
  out->id = req.id();
  bool raw = !raws.empty();
  if (raw && raws.size() != static_cast<size_t>(req.inputs_size()))
    return Refuse(grpc::StatusCode::INVALID_ARGUMENT,
                  "the request has " + std::to_string(raws.size()) + " raw_input_contents for " +
                      std::to_string(req.inputs_size()) + " inputs; give one per input, or none");
  std::vector<bool> seen(declared.size(), false);
  for (int i = 0; i < req.inputs_size(); ++i) {
    const pb::ModelInferRequest::InferInputTensor& in = req.inputs(i);
    size_t k = 0;
    while (k < declared.size() && declared[k].name != in.name()) ++k;
    if (k == declared.size())
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "model '" + model.name() + "' has no input '" + Excerpt(in.name()) + "'");
    if (seen[k]) return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "input '" + in.name() + "' is given twice");
    seen[k] = true;
    TensorInfo t = declared[k];
    if (in.datatype() != DatatypeName(t.element_type))
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT,
                    "input '" + in.name() + "' must have datatype " + DatatypeName(t.element_type));
    std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
    StatusOr<TensorInfo> sent = InputAsSent(model, t, shape, &out->rows);
    if (!sent.ok()) return Refuse(grpc::StatusCode::INVALID_ARGUMENT, sent.status().message());
    t = *sent;
    if (raw) {
      std::vector<unsigned char>& bytes = raws[static_cast<size_t>(i)];
      if (bytes.size() != t.byte_size)
        return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "input '" + in.name() + "' has " +
                                                              std::to_string(bytes.size()) +
                                                              " bytes of raw_input_contents; its tensor takes " +
                                                              std::to_string(t.byte_size));
      out->inputs[k] = std::move(bytes);
      continue;
    }
    if (!in.has_contents())
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT,
                    "input '" + in.name() + "' has neither contents nor raw_input_contents");
    std::string why;
    if (!FromContents(in.contents(), t, t.byte_size / ElementTypeSize(t.element_type), &out->inputs[k], &why))
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "input '" + in.name() + "' " + why);
  }
  for (size_t k = 0; k < declared.size(); ++k)
    if (!seen[k]) return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "input '" + declared[k].name + "' is missing");
  for (const auto& o : req.outputs()) {
    size_t k = 0;
    while (k < model.outputs().size() && model.outputs()[k].name != o.name()) ++k;
    if (k == model.outputs().size())
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "model '" + model.name() + "' has no output '" + Excerpt(o.name()) + "'");
    // Each output once: 40 copies of a large output built a 250 MB answer before its refusal.
    if (std::find(out->outputs.begin(), out->outputs.end(), k) != out->outputs.end())
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "output '" + o.name() + "' is requested more than once");
    out->outputs.push_back(k);
  }
  if (out->outputs.empty())
    for (size_t k = 0; k < model.outputs().size(); ++k) out->outputs.push_back(k);
  return grpc::Status::OK;
}

using Wire = google::protobuf::internal::WireFormatLite;

// A serialized ModelInferRequest read without copying its tensors twice: every field but
// raw_input_contents parsed into `message`, each raw_input_contents copied once, from gRPC's
// slices straight into the buffer the run reads. False when the bytes are no such message.
bool ReadInferRequest(grpc::ByteBuffer* bytes, pb::ModelInferRequest* message,
                      std::vector<std::vector<unsigned char>>* raws) {
  const uint32_t raw_tag = Wire::MakeTag(pb::ModelInferRequest::kRawInputContentsFieldNumber,
                                         Wire::WIRETYPE_LENGTH_DELIMITED);
  const size_t total = bytes->Length();
  std::string rest;
  {
    grpc::ProtoBufferReader reader(bytes);
    google::protobuf::io::CodedInputStream in(&reader);
    google::protobuf::io::StringOutputStream rest_stream(&rest);
    google::protobuf::io::CodedOutputStream out(&rest_stream);
    while (uint32_t tag = in.ReadTag()) {
      if (tag != raw_tag) {
        if (!Wire::SkipField(&in, tag, &out)) return false;
        continue;
      }
      uint32_t length = 0;
      // A length beyond the message's end must not allocate before the read fails.
      if (!in.ReadVarint32(&length) || length > total - static_cast<size_t>(in.CurrentPosition())) return false;
      raws->emplace_back(length);
      if (length > 0 && !in.ReadRaw(raws->back().data(), static_cast<int>(length))) return false;
    }
    if (!in.ConsumedEntireMessage()) return false;
  }
  return message->ParseFromString(rest);
}

// The answer as gRPC bytes without copying the outputs: `head` (every field but the outputs'
// bytes) serialized, then each output as a raw_output_contents field whose slice owns its
// buffer until gRPC has sent it.
grpc::ByteBuffer AnswerBytes(const pb::ModelInferResponse& head, std::vector<std::vector<unsigned char>> outputs) {
  std::vector<grpc::Slice> slices;
  std::string serialized = head.SerializeAsString();
  slices.emplace_back(serialized.data(), serialized.size());
  for (std::vector<unsigned char>& bytes : outputs) {
    std::string prefix;
    {
      google::protobuf::io::StringOutputStream stream(&prefix);
      google::protobuf::io::CodedOutputStream out(&stream);
      out.WriteTag(Wire::MakeTag(pb::ModelInferResponse::kRawOutputContentsFieldNumber,
                                 Wire::WIRETYPE_LENGTH_DELIMITED));
      out.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    }
    slices.emplace_back(prefix.data(), prefix.size());
    if (bytes.empty()) continue;
    auto* owned = new std::vector<unsigned char>(std::move(bytes));
    slices.emplace_back(owned->data(), owned->size(),
                        [](void* p) { delete static_cast<std::vector<unsigned char>*>(p); }, owned);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

void Describe(const TensorInfo& t, bool batched, pb::ModelMetadataResponse::TensorMetadata* m) {
  m->set_name(t.name);
  m->set_datatype(DatatypeName(t.element_type));
  for (size_t d = 0; d < t.shape.size(); ++d) m->add_shape(batched && d == 0 ? -1 : t.shape[d]);
}

}  // namespace

// ModelInfer is a raw callback method: gRPC hands over the message's bytes, unparsed. The
// model and the admission are decided on its model_name, read off the bytes, so a call that is
// refused (no such model, every session busy and the queue full) never has its message parsed:
// its memory is only the transport's, which --grpc-max-inflight bounds for all calls together.
// An admitted call runs on one of the threads kept for them (CallThreads); the bytes are
// released once parsed, the parsed message once its tensors are taken.
using ServiceBase = pb::GRPCInferenceService::WithRawCallbackMethod_ModelInfer<pb::GRPCInferenceService::Service>;

// The threads admitted calls run on, kept and reused: a thread made per call cost 90 us a call
// (190 -> 280 us for a small model). A job waits for no other: one more thread starts when the
// jobs queued outnumber the idle threads, so there are as many as calls ever ran at once
// (admission bounds them).
class CallThreads {
 public:
  ~CallThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // False when no thread could be started for `job` (it is then not run).
  bool Run(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    if (jobs_.size() <= idle_) {
      wake_.notify_one();
      return true;
    }
    try {
      threads_.emplace_back([this] { Loop(); });
    } catch (const std::system_error&) {
      jobs_.pop_back();
      return false;
    }
    return true;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      while (jobs_.empty() && !stopping_) {
        ++idle_;
        wake_.wait(lock);
        --idle_;
      }
      if (jobs_.empty()) return;  // stopping
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

struct GrpcServer::Impl final : public ServiceBase {
  ModelRegistry* registry;
  Metrics* metrics;
  GrpcOptions options;
  std::unique_ptr<grpc::Server> server;

  // Admitted calls still on their threads: Stop waits for them after gRPC's own Wait.
  std::mutex workers_mu;
  std::condition_variable workers_done;
  int workers = 0;
  CallThreads threads;

  class InferCall;

  grpc::Status ServerLive(grpc::ServerContext*, const pb::ServerLiveRequest*, pb::ServerLiveResponse* r) override {
    r->set_live(true);
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(grpc::ServerContext*, const pb::ServerReadyRequest*, pb::ServerReadyResponse* r) override {
    r->set_ready(!options.unready || options.unready().empty());
    return grpc::Status::OK;
  }
  grpc::Status ModelReady(grpc::ServerContext*, const pb::ModelReadyRequest* q, pb::ModelReadyResponse* r) override {
    r->set_ready(registry->Find(q->name()) != nullptr);
    return grpc::Status::OK;
  }
  grpc::Status ServerMetadata(grpc::ServerContext*, const pb::ServerMetadataRequest*,
                              pb::ServerMetadataResponse* r) override {
    r->set_name("hexir-serve");
    r->set_version("0.1.0");
    r->add_extensions("model_repository");
    return grpc::Status::OK;
  }
  grpc::Status ModelMetadata(grpc::ServerContext*, const pb::ModelMetadataRequest* q,
                             pb::ModelMetadataResponse* r) override {
    std::shared_ptr<ModelPool> model = registry->Find(q->name());
    if (!model) return Refuse(grpc::StatusCode::NOT_FOUND, "no model '" + Excerpt(q->name()) + "'");
    r->set_name(q->name());
    r->add_versions("1");
    r->set_platform("hexir");
    bool batched = model->signature().max_batch > 0;
    for (const TensorInfo& t : model->inputs()) Describe(t, batched, r->add_inputs());
    for (const TensorInfo& t : model->outputs()) Describe(t, batched, r->add_outputs());
    return grpc::Status::OK;
  }
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;

  // The worker of an admitted call: parses, runs and answers it into `answer`.
  grpc::Status Infer(grpc::CallbackServerContext* context, const std::shared_ptr<ModelPool>& model,
                     const ModelPool::Ticket& ticket, const std::string& name, grpc::ByteBuffer* bytes,
                     const std::atomic<bool>& cancelled, Clock::time_point start, grpc::ByteBuffer* answer) {
    pb::ModelInferRequest q;
    std::vector<std::vector<unsigned char>> raws;
    if (!ReadInferRequest(bytes, &q, &raws))
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "the message is not an inference.ModelInferRequest");
    bytes->Clear();
    // Admitted under the first model_name the bytes carry; protobuf keeps the last.
    if (q.model_name() != name)
      return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "model_name is given more than once, with different values");
    InferRequest request;
    grpc::Status parsed = ParseRequest(q, raws, model->signature(), &request);
    if (!parsed.ok()) return parsed;
    raws.clear();
    // The answer's size is known before the run: one over the message limit is refused now,
    // not after it was built.
    uint64_t size = 0;
    for (size_t k : request.outputs) size += WithRows(model->outputs()[k], request.rows).byte_size;
    if (size > static_cast<uint64_t>(options.max_message_bytes))
      return Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED,
                    "the answer would take " + std::to_string(size) + " bytes of outputs, over the " +
                        std::to_string(options.max_message_bytes) + "-byte message limit (--grpc-max-message)");
    // The run stops at the client's deadline or --request-timeout, whichever comes first, and
    // when the call is cancelled (by the client, or by a shutdown whose grace ended).
    RunOptions control;
    control.cancel = &cancelled;
    control.max_loop_trips = options.max_loop_trips;
    if (options.request_timeout_s > 0)
      control.deadline = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(options.request_timeout_s));
    auto client = context->deadline();
    if (client != std::chrono::system_clock::time_point::max()) {
      Clock::time_point theirs = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    client - std::chrono::system_clock::now());
      if (!control.deadline || theirs < *control.deadline) control.deadline = theirs;
    }
    std::vector<std::vector<unsigned char>> outputs;
    Status ran = model->Infer(ticket, request.rows, request.inputs, &outputs, control);
    if (!ran.ok()) return Refuse(CodeOf(ran), ran.message());
    request.inputs.clear();
    pb::ModelInferResponse r;
    r.set_model_name(q.model_name());
    r.set_model_version("1");
    r.set_id(q.id());
    std::vector<std::vector<unsigned char>> answered;
    for (size_t k : request.outputs) {
      TensorInfo t = WithRows(model->outputs()[k], request.rows);
      pb::ModelInferResponse::InferOutputTensor* o = r.add_outputs();
      o->set_name(t.name);
      o->set_datatype(DatatypeName(t.element_type));
      for (int64_t d : t.shape) o->add_shape(d);
      answered.push_back(std::move(outputs[k]));
    }
    *answer = AnswerBytes(r, std::move(answered));
    return grpc::Status::OK;
  }
};

// One ModelInfer call: refused at once, or run on one of the CallThreads; gRPC deletes nothing, the
// reactor deletes itself when gRPC is done with it.
class GrpcServer::Impl::InferCall final : public grpc::ServerUnaryReactor {
 public:
  InferCall(Impl* impl, grpc::CallbackServerContext* context) : impl_(impl), context_(context) {}

  void Start(const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
    start_ = Clock::now();
    // gRPC owns the request for the call's life; it is ours to read and release.
    auto* bytes = const_cast<grpc::ByteBuffer*>(request);
    std::string name;
    if (!ModelNameOf(bytes, &name)) return Finish(Refuse(grpc::StatusCode::INVALID_ARGUMENT,
                                                          "the message is not an inference.ModelInferRequest"));
    std::shared_ptr<ModelPool> model = impl_->registry->Find(name);
    if (!model) return Finish(Refuse(grpc::StatusCode::NOT_FOUND, "no model '" + Excerpt(name) + "'"));
    ModelPool::Ticket ticket = model->Admit();
    if (!ticket) {
      impl_->metrics->For(model->name()).rejected.fetch_add(1);
      return Done(*model, Refuse(grpc::StatusCode::UNAVAILABLE,
                                 "model '" + model->name() + "' is busy: every session is working and the queue is full"));
    }
    {
      std::lock_guard<std::mutex> lock(impl_->workers_mu);
      ++impl_->workers;
    }
    // (A job is copyable: the ticket travels in a shared_ptr.)
    auto admitted = std::make_shared<ModelPool::Ticket>(std::move(ticket));
    bool started = impl_->threads.Run([this, model, admitted, name, bytes, response]() mutable {
      Impl* impl = impl_;
      grpc::Status status;
      // Out of memory on a call's path (its tensors, its answer): that call fails.
      try {
        status = impl->Infer(context_, model, *admitted, name, bytes, cancelled_, start_, response);
      } catch (const std::bad_alloc&) {
        status = Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED, "out of memory answering the call");
      }
      admitted.reset();  // the session's place, before the answer: the next call may take it
      Done(*model, status);  // `this` may be gone from here on
      model.reset();
      std::lock_guard<std::mutex> lock(impl->workers_mu);
      if (--impl->workers == 0) impl->workers_done.notify_all();
    });
    if (!started) {
      {
        std::lock_guard<std::mutex> lock(impl_->workers_mu);
        --impl_->workers;
      }
      admitted.reset();
      Done(*model, Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED, "no thread to run the call"));
    }
  }

 private:
  void Done(const ModelPool& model, const grpc::Status& status) {
    impl_->metrics->Observe(model.name(), std::chrono::duration<double>(Clock::now() - start_).count(), status.ok());
    Finish(status);
  }
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override { delete this; }

  // The first model_name field of a serialized ModelInferRequest, read without parsing the rest
  // (an absent one is empty); false when the bytes are no protobuf message.
  static bool ModelNameOf(grpc::ByteBuffer* bytes, std::string* name) {
    grpc::ProtoBufferReader reader(bytes);
    google::protobuf::io::CodedInputStream in(&reader);
    while (uint32_t tag = in.ReadTag()) {
      if (tag == Wire::MakeTag(pb::ModelInferRequest::kModelNameFieldNumber, Wire::WIRETYPE_LENGTH_DELIMITED))
        return Wire::ReadString(&in, name);
      if (!Wire::SkipField(&in, tag)) return false;
    }
    name->clear();
    return in.ConsumedEntireMessage();
  }

  Impl* impl_;
  grpc::CallbackServerContext* context_;
  Clock::time_point start_;
  std::atomic<bool> cancelled_{false};
};

grpc::ServerUnaryReactor* GrpcServer::Impl::ModelInfer(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
  auto* call = new InferCall(this, context);
  call->Start(request, response);
  return call;
}

GrpcServer::GrpcServer(ModelRegistry* registry, Metrics* metrics, GrpcOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->registry = registry;
  impl_->metrics = metrics;
  impl_->options = options;
}

GrpcServer::~GrpcServer() { Stop(0); }

bool GrpcServer::Start() {
  grpc::ServerBuilder builder;
  // An IPv6 address is bracketed in gRPC's address syntax ("[::1]:8001").
  const std::string& host = impl_->options.host;
  bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  builder.AddListeningPort((ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(impl_->options.port),
                           grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(impl_.get());
  builder.SetMaxReceiveMessageSize(impl_->options.max_message_bytes);
  builder.SetMaxSendMessageSize(impl_->options.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             static_cast<int>(std::min(impl_->options.idle_timeout_s * 1000, 2e9)));
  // Every call's transport buffers together (requests read, answers written) stay within this:
  // past it gRPC stops reading from its sockets until memory is released.
  grpc::ResourceQuota quota("hexir-serve-grpc");
  quota.Resize(static_cast<size_t>(impl_->options.max_inflight_bytes));
  builder.SetResourceQuota(quota);
  impl_->server = builder.BuildAndStart();
  return impl_->server != nullptr && port_ != 0;
}

void GrpcServer::Stop(double grace_s) {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000)));
  impl_->server->Wait();
  // A worker answers before it lets go of its model: wait until the last one has.
  std::unique_lock<std::mutex> lock(impl_->workers_mu);
  impl_->workers_done.wait(lock, [&] { return impl_->workers == 0; });
  lock.unlock();
  impl_->server.reset();
}

}  // namespace hexir::serve

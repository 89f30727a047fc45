#include "serve/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <new>
#include <mutex>
#include <thread>
#include <cstring>

#include <grpcpp/grpcpp.h>

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
grpc::Status ParseRequest(const pb::ModelInferRequest& req, const ModelSignature& model, InferRequest* out) {
  const std::vector<TensorInfo>& declared = model.inputs();
  out->inputs.assign(declared.size(), {});
  out->id = req.id();
  bool raw = req.raw_input_contents_size() > 0;
  if (raw && req.raw_input_contents_size() != req.inputs_size())
    return Refuse(grpc::StatusCode::INVALID_ARGUMENT,
                  "the request has " + std::to_string(req.raw_input_contents_size()) + " raw_input_contents for " +
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
      const std::string& bytes = req.raw_input_contents(i);
      if (bytes.size() != t.byte_size)
        return Refuse(grpc::StatusCode::INVALID_ARGUMENT, "input '" + in.name() + "' has " +
                                                              std::to_string(bytes.size()) +
                                                              " bytes of raw_input_contents; its tensor takes " +
                                                              std::to_string(t.byte_size));
      out->inputs[k].assign(bytes.begin(), bytes.end());
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

void Describe(const TensorInfo& t, bool batched, pb::ModelMetadataResponse::TensorMetadata* m) {
  m->set_name(t.name);
  m->set_datatype(DatatypeName(t.element_type));
  for (size_t d = 0; d < t.shape.size(); ++d) m->add_shape(batched && d == 0 ? -1 : t.shape[d]);
}

}  // namespace

struct GrpcServer::Impl final : public pb::GRPCInferenceService::Service {
  ModelRegistry* registry;
  Metrics* metrics;
  GrpcOptions options;
  std::unique_ptr<grpc::Server> server;

  // Calls running a model, each with the flag its run stops on. A watcher thread polls their
  // contexts (the synchronous API notifies no one): a client that cancels or disconnects, or a
  // shutdown whose deadline passed, cancels the call's context, and the watcher then sets the
  // flag, so the handler returns within one command and Shutdown's Wait ends.
  std::mutex calls_mu;
  std::map<grpc::ServerContext*, std::atomic<bool>*> calls;
  std::condition_variable watcher_wake;
  bool watcher_stop = false;
  std::thread watcher;

  void Watch() {
    std::unique_lock<std::mutex> lock(calls_mu);
    while (!watcher_stop) {
      for (auto& [context, flag] : calls)
        if (context->IsCancelled()) flag->store(true);
      // Every 20 ms while calls run; asleep while none does (a new call wakes it).
      if (calls.empty())
        watcher_wake.wait(lock, [&] { return watcher_stop || !calls.empty(); });
      else
        watcher_wake.wait_for(lock, std::chrono::milliseconds(20));
    }
  }

  // Registers a call's flag for the watcher while it lives.
  class Watched {
   public:
    Watched(Impl& impl, grpc::ServerContext* context, std::atomic<bool>* flag) : impl_(impl), context_(context) {
      {
        std::lock_guard<std::mutex> lock(impl_.calls_mu);
        impl_.calls[context_] = flag;
      }
      impl_.watcher_wake.notify_one();
    }
    ~Watched() {
      std::lock_guard<std::mutex> lock(impl_.calls_mu);
      impl_.calls.erase(context_);
    }

   private:
    Impl& impl_;
    grpc::ServerContext* context_;
  };

  grpc::Status ServerLive(grpc::ServerContext*, const pb::ServerLiveRequest*, pb::ServerLiveResponse* r) override {
    r->set_live(true);
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(grpc::ServerContext*, const pb::ServerReadyRequest*, pb::ServerReadyResponse* r) override {
    r->set_ready(true);
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
  grpc::Status ModelInfer(grpc::ServerContext* context, const pb::ModelInferRequest* q,
                          pb::ModelInferResponse* r) override {
    // Out of memory on a call's path (its tensors, its answer): that call fails.
    try {
      return Infer(context, q, r);
    } catch (const std::bad_alloc&) {
      r->Clear();
      return Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED, "out of memory answering the call");
    }
  }

  grpc::Status Infer(grpc::ServerContext* context, const pb::ModelInferRequest* q, pb::ModelInferResponse* r) {
    // Held to the end of the call: a new version loaded meanwhile serves the next ones.
    std::shared_ptr<ModelPool> model = registry->Find(q->model_name());
    if (!model) return Refuse(grpc::StatusCode::NOT_FOUND, "no model '" + Excerpt(q->model_name()) + "'");
    Clock::time_point start = Clock::now();
    auto finish = [&](grpc::Status s) {
      metrics->Observe(model->name(), std::chrono::duration<double>(Clock::now() - start).count(), s.ok());
      return s;
    };
    // (gRPC has parsed the message already: admission here bounds the runs, not the parsing;
    // the message size is bounded by --grpc-max-message.)
    ModelPool::Ticket ticket = model->Admit();
    if (!ticket) {
      metrics->For(model->name()).rejected.fetch_add(1);
      return finish(Refuse(grpc::StatusCode::UNAVAILABLE, "model '" + model->name() +
                                                              "' is busy: every session is working and the queue is full"));
    }
    InferRequest request;
    grpc::Status parsed = ParseRequest(*q, model->signature(), &request);
    if (!parsed.ok()) return finish(parsed);
    // The answer's size is known before the run: one over the message limit is refused now,
    // not after it was built.
    uint64_t answer = 0;
    for (size_t k : request.outputs) answer += WithRows(model->outputs()[k], request.rows).byte_size;
    if (answer > static_cast<uint64_t>(options.max_message_bytes))
      return finish(Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED,
                           "the answer would take " + std::to_string(answer) + " bytes of outputs, over the " +
                               std::to_string(options.max_message_bytes) + "-byte message limit (--grpc-max-message)"));
    std::vector<std::vector<unsigned char>> outputs;
    // The run stops at the client's deadline or --request-timeout, whichever comes first, and
    // when the call is cancelled.
    std::atomic<bool> cancelled{false};
    Watched watched(*this, context, &cancelled);
    RunOptions control;
    control.cancel = &cancelled;
    if (options.request_timeout_s > 0)
      control.deadline = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(options.request_timeout_s));
    auto client = context->deadline();
    if (client != std::chrono::system_clock::time_point::max()) {
      Clock::time_point theirs = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    client - std::chrono::system_clock::now());
      if (!control.deadline || theirs < *control.deadline) control.deadline = theirs;
    }
    Status ran = model->Infer(ticket, request.rows, request.inputs, &outputs, control);
    if (!ran.ok()) return finish(Refuse(CodeOf(ran), ran.message()));
    r->set_model_name(q->model_name());
    r->set_model_version("1");
    r->set_id(q->id());
    for (size_t k : request.outputs) {
      TensorInfo t = WithRows(model->outputs()[k], request.rows);
      pb::ModelInferResponse::InferOutputTensor* o = r->add_outputs();
      o->set_name(t.name);
      o->set_datatype(DatatypeName(t.element_type));
      for (int64_t d : t.shape) o->add_shape(d);
      r->add_raw_output_contents(reinterpret_cast<const char*>(outputs[k].data()), outputs[k].size());
    }
    return finish(grpc::Status::OK);
  }
};

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
  impl_->server = builder.BuildAndStart();
  if (impl_->server == nullptr || port_ == 0) return false;
  impl_->watcher = std::thread([impl = impl_.get()] { impl->Watch(); });
  return true;
}

void GrpcServer::Stop(double grace_s) {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000)));
  impl_->server->Wait();
  impl_->server.reset();
  {
    std::lock_guard<std::mutex> lock(impl_->calls_mu);
    impl_->watcher_stop = true;
  }
  impl_->watcher_wake.notify_all();
  if (impl_->watcher.joinable()) impl_->watcher.join();
}

}  // namespace hexir::serve

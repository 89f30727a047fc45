#include "serve/server.h"

#include <chrono>
#include <cstdio>

#include "serve/http_server.h"
#include "serve/protocol.h"

namespace hexir::serve {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A JSON request of a model's inputs takes at most this many bytes per element (a float with
// 17 digits, exponent, sign and separator), plus room for names and shapes.
uint64_t BodyLimit(const ModelPool& model) {
  uint64_t elements = 0;
  for (const TensorInfo& t : model.inputs()) {
    // With batching, max_batch rows of it.
    TensorInfo most = WithRows(t, model.signature().max_batch);
    elements += std::max(t.byte_size, most.byte_size) / std::max<uint64_t>(ElementTypeSize(t.element_type), 1);
  }
  return elements * 32 + 65536;
}

// The body of any other request (health, metadata: none).
constexpr uint64_t kOtherBodyLimit = 65536;

}  // namespace

struct Server::Impl {
  ServedModels served;
  ServerOptions options;
  std::unique_ptr<HttpServer> http;

  Metrics& metrics() { return *served.metrics; }
  HttpResponse Repository(const std::string& path);

  HttpResponse Handle(const HttpRequest& req);
  HttpResponse Infer(ModelPool& model, const HttpRequest& req);
  // The response of an infer request whose outputs are computed; `finish` records it.
  template <typename Finish>
  HttpResponse Reply(ModelPool& model, const InferRequest& request,
                     const std::vector<std::vector<unsigned char>>& outputs, Finish& finish);
};

namespace {

HttpResponse ErrorReply(int status, const std::string& message) {
  HttpResponse res;
  res.status = status;
  res.body = json{{"error", message}}.dump();
  return res;
}

HttpResponse JsonReply(const json& body, const std::string& content_type = "application/json") {
  HttpResponse res;
  res.content_type = content_type;
  res.body = body.dump();
  return res;
}

// "/v2/models/NAME/SUFFIX" -> NAME and SUFFIX ("" for "/v2/models/NAME"); false for other paths.
bool ModelPath(const std::string& path, std::string* name, std::string* suffix) {
  static const std::string kPrefix = "/v2/models/";
  if (path.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  std::string rest = path.substr(kPrefix.size());
  size_t slash = rest.find('/');
  *name = rest.substr(0, slash);
  *suffix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  return !name->empty();
}

}  // namespace

HttpResponse Server::Impl::Handle(const HttpRequest& req) {
  std::string path = req.target.substr(0, req.target.find('?'));
  bool get = req.method == "GET", post = req.method == "POST";
  if (get && path == "/v2/health/live") return JsonReply(json{{"live", true}});
  if (get && path == "/v2/health/ready") {
    std::string why = served.repository && served.strict_readiness ? served.repository->Unready() : "";
    if (!why.empty()) {
      HttpResponse res = JsonReply(json{{"ready", false}, {"error", why}});
      res.status = 503;
      return res;
    }
    return JsonReply(json{{"ready", true}});
  }
  if (get && path == "/v2")
    return JsonReply(json{{"name", "hexir-serve"}, {"version", "0.1.0"}, {"extensions", json::array({"binary_tensor_data", "model_repository"})}});
  if (get && path == "/metrics") {
    HttpResponse res;
    res.content_type = "text/plain; version=0.0.4";
    res.body = metrics().Text(served.registry->All());
    return res;
  }
  if (post && path.compare(0, 15, "/v2/repository/") == 0) return Repository(path);
  std::string name, suffix;
  if (ModelPath(path, &name, &suffix) && ((get && (suffix.empty() || suffix == "ready")) || (post && suffix == "infer"))) {
    // Held to the end of the request: a new version loaded meanwhile serves the next ones.
    std::shared_ptr<ModelPool> model = served.registry->Find(name);
    if (!model) return ErrorReply(404, "no model '" + Excerpt(name) + "'");
    if (suffix.empty()) return JsonReply(ModelMetadata(model->signature()));
    if (suffix == "ready") return JsonReply(json{{"name", name}, {"ready", true}});
    return Infer(*model, req);
  }
  return ErrorReply(404, "not found");
}

HttpResponse Server::Impl::Repository(const std::string& path) {
  static const std::string kModels = "/v2/repository/models/";
  if (path == "/v2/repository/index") {
    json index = served.repository ? served.repository->Index() : json::array();
    // Models given with --model are in the index too, not in the folder.
    for (const auto& [name, pool] : served.registry->All()) {
      bool listed = false;
      for (const json& item : index) listed |= item["name"] == name;
      if (!listed) index.push_back(json{{"name", name}, {"version", "1"}, {"state", "READY"}});
    }
    return JsonReply(index);
  }
  if (path.compare(0, kModels.size(), kModels) == 0) {
    std::string rest = path.substr(kModels.size());
    size_t slash = rest.find('/');
    std::string name = rest.substr(0, slash), action = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (!name.empty() && (action == "load" || action == "unload")) {
      Status done = Status::Ok();
      if (action == "unload") {
        done = served.repository ? served.repository->Unload(name)
               : served.registry->Unload(name) ? Status::Ok()
                                               : NotFoundError("model '", name, "' is not loaded");
      } else if (!served.repository) {
        done = FailedPreconditionError("no model repository to load '", name, "' from (--model-repository DIR)");
      } else {
        done = served.repository->Load(name);
      }
      if (done.ok()) return JsonReply(json::object());
      return ErrorReply(done.code() == StatusCode::kNotFound ? 404 : 400, done.message());
    }
  }
  return ErrorReply(404, "not found");
}

namespace {
std::string FormatSeconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", s);
  return text;
}
}  // namespace

HttpResponse Server::Impl::Infer(ModelPool& model, const HttpRequest& req) {
  Clock::time_point start = Clock::now();
  auto finish = [&](bool ok) {
    metrics().Observe(model.name(), std::chrono::duration<double>(Clock::now() - start).count(), ok);
  };
  // Admitted before parsing: the tensors of at most sessions + max_queue requests exist at
  // once, however many clients are connected.
  ModelPool::Ticket ticket = model.Admit();
  if (!ticket) {
    metrics().For(model.name()).rejected.fetch_add(1);
    finish(false);
    return ErrorReply(503, "model '" + model.name() + "' is busy: every session is working and the queue is full");
  }
  // The binary tensor data extension: the JSON is the first Inference-Header-Content-Length
  // bytes, binary tensor data follows.
  std::string header = req.body, binary;
  if (req.HasHeader("inference-header-content-length")) {
    const std::string& text = req.Header("inference-header-content-length");
    bool digits = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
    uint64_t length = digits ? std::stoull(text) : 0;
    if (!digits || length > req.body.size()) {
      finish(false);
      return ErrorReply(400, "Inference-Header-Content-Length '" + text + "' is not a length within the " +
                                 std::to_string(req.body.size()) + "-byte body");
    }
    header = req.body.substr(0, length);
    binary = req.body.substr(length);
  }
  InferRequest request;
  Status parsed = ParseInferRequest(header, binary, model.signature(), &request);
  if (!parsed.ok()) {
    finish(false);
    return ErrorReply(400, parsed.message());
  }
  std::vector<std::vector<unsigned char>> outputs;
  RunOptions control;
  control.cancel = req.abandoned.get();
  control.max_loop_trips = options.max_loop_trips;
  if (options.request_timeout_s > 0)
    control.deadline = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(options.request_timeout_s));
  Status ran = model.Infer(ticket, request.rows, request.inputs, &outputs, control);
  if (!ran.ok()) {
    finish(false);
    if (ran.code() == StatusCode::kDeadlineExceeded)
      return ErrorReply(504, ran.message() + " (--request-timeout " + FormatSeconds(options.request_timeout_s) + ")");
    if (ran.code() == StatusCode::kCancelled)
      return ErrorReply(503, ran.message() + " (the client went away or the server is stopping)");
    return ErrorReply(ran.code() == StatusCode::kInvalidArgument ? 400 : 500, ran.message());
  }
  return Reply(model, request, outputs, finish);
}

template <typename Finish>
HttpResponse Server::Impl::Reply(ModelPool& model, const InferRequest& request,
                                 const std::vector<std::vector<unsigned char>>& outputs, Finish& finish) {
  InferReply reply = InferResponse(model.signature(), request, outputs);
  HttpResponse res;
  if (reply.binary.empty()) {
    res.body = std::move(reply.json);
  } else {
    res.content_type = "application/octet-stream";
    res.headers.push_back({"Inference-Header-Content-Length", std::to_string(reply.json.size())});
    res.body = reply.json + reply.binary;
  }
  finish(true);
  return res;
}

Server::Server(ServedModels models, ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->served = models;
  impl_->options = options;
  Impl& s = *impl_;
  HttpServerOptions http;
  http.host = options.host;
  http.port = options.port;
  http.workers = std::max(1, options.threads);
  http.max_connections = options.max_connections;
  http.header_timeout_s = options.header_timeout_s;
  http.body_timeout_s = options.body_timeout_s;
  http.idle_timeout_s = options.idle_timeout_s;
  http.shutdown_grace_s = options.shutdown_grace_s;
  // A request's body may be as large as its model's inputs can need in JSON; anything else
  // needs no body to speak of.
  auto limit = [&s](const HttpRequest& req) {
    std::string name, suffix;
    std::string path = req.target.substr(0, req.target.find('?'));
    if (req.method == "POST" && ModelPath(path, &name, &suffix) && suffix == "infer")
      if (std::shared_ptr<ModelPool> model = s.served.registry->Find(name))
        return HttpRequestReader::BodyLimit{BodyLimit(*model), "the " + std::to_string(BodyLimit(*model)) +
                                                                   " bytes a request of model '" + name + "' can need"};
    return HttpRequestReader::BodyLimit{kOtherBodyLimit,
                                        "the " + std::to_string(kOtherBodyLimit) + " bytes a request may have here"};
  };
  s.http = std::make_unique<HttpServer>(http, [&s](const HttpRequest& req) { return s.Handle(req); }, limit,
                                        ErrorReply);
}

Server::~Server() = default;

bool Server::Serve() {
  Impl& s = *impl_;
  if (!s.http->Bind()) return false;
  bound_port_ = s.http->port();
  std::printf("hexir-serve: listening on %s:%d\n", s.options.host.c_str(), bound_port_);
  std::fflush(stdout);
  s.http->Run();
  return true;
}

void Server::Stop() { impl_->http->Stop(); }

}  // namespace hexir::serve

#include "serve/server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <chrono>

#include "serve/protocol.h"

namespace hexir::serve {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void Error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json{{"error", message}}.dump(), "application/json");
}

// A JSON request of a model's inputs takes at most this many bytes per element (a float with
// 17 digits, exponent, sign and separator), plus room for names and shapes.
uint64_t BodyLimit(const ModelPool& model) {
  uint64_t elements = 0;
  for (const TensorInfo& t : model.inputs()) elements += t.byte_size / std::max<uint64_t>(ElementTypeSize(t.element_type), 1);
  return elements * 32 + 65536;
}

}  // namespace

struct Server::Impl {
  std::map<std::string, std::unique_ptr<ModelPool>> models;
  ServerOptions options;
  Metrics metrics;
  httplib::Server http;
  socket_t listen_socket = -1;  // cpp-httplib's socket type (global)
};

Server::Server(std::map<std::string, std::unique_ptr<ModelPool>> models, ServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->models = std::move(models);
  impl_->options = options;
  Impl& s = *impl_;
  uint64_t limit = 65536;
  for (const auto& [name, pool] : s.models) {
    s.metrics.For(name);
    limit = std::max(limit, BodyLimit(*pool));
  }
  s.http.set_payload_max_length(limit);
  // cpp-httplib closes a connection after 5 requests and listens with a backlog of 5: under
  // load, 32 clients reconnecting every 5 requests overflowed the accept queue and saw
  // connections reset. Keep connections for 1000 requests (nginx's default) and, once bound,
  // listen with the system's backlog (listen() on a listening socket updates it).
  s.http.set_keep_alive_max_count(1000);
  s.http.set_socket_options([&s](socket_t sock) {
    int yes = 1;  // what cpp-httplib's default options set
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    s.listen_socket = sock;
  });
  int threads = std::max(1, options.threads);
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };

  s.http.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"live", true}}.dump(), "application/json");
  });
  s.http.Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"ready", true}}.dump(), "application/json");
  });
  s.http.Get("/v2", [&s](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"name", "hexir-serve"}, {"version", "0.1.0"}, {"extensions", json::array()}}.dump(),
                    "application/json");
  });
  s.http.Get(R"(/v2/models/([^/]+))", [&s](const httplib::Request& req, httplib::Response& res) {
    auto it = s.models.find(req.matches[1]);
    if (it == s.models.end()) return Error(res, 404, "no model '" + std::string(req.matches[1]) + "'");
    res.set_content(ModelMetadata(*it->second).dump(), "application/json");
  });
  s.http.Get(R"(/v2/models/([^/]+)/ready)", [&s](const httplib::Request& req, httplib::Response& res) {
    auto it = s.models.find(req.matches[1]);
    if (it == s.models.end()) return Error(res, 404, "no model '" + std::string(req.matches[1]) + "'");
    res.set_content(json{{"name", it->first}, {"ready", true}}.dump(), "application/json");
  });
  s.http.Post(R"(/v2/models/([^/]+)/infer)", [&s](const httplib::Request& req, httplib::Response& res) {
    auto it = s.models.find(req.matches[1]);
    if (it == s.models.end()) return Error(res, 404, "no model '" + std::string(req.matches[1]) + "'");
    ModelPool& model = *it->second;
    Clock::time_point start = Clock::now();
    auto finish = [&](bool ok) {
      s.metrics.Observe(model.name(), std::chrono::duration<double>(Clock::now() - start).count(), ok);
    };
    if (req.body.size() > BodyLimit(model)) {
      finish(false);
      return Error(res, 413, "the request body of " + std::to_string(req.body.size()) + " bytes is over the " +
                                 std::to_string(BodyLimit(model)) + " bytes a request of model '" + model.name() +
                                 "' can need");
    }
    // Admitted before parsing: the tensors of at most sessions + max_queue requests exist at
    // once, however many clients are connected.
    ModelPool::Ticket ticket = model.Admit();
    if (!ticket) {
      s.metrics.For(model.name()).rejected.fetch_add(1);
      finish(false);
      return Error(res, 503, "model '" + model.name() + "' is busy: every session is working and the queue is full");
    }
    // The binary tensor data extension: the JSON is the first Inference-Header-Content-Length
    // bytes, binary tensor data follows.
    std::string header = req.body, binary;
    if (req.has_header("Inference-Header-Content-Length")) {
      const std::string text = req.get_header_value("Inference-Header-Content-Length");
      bool digits = !text.empty() && text.size() <= 18 &&
                    text.find_first_not_of("0123456789") == std::string::npos;
      uint64_t length = digits ? std::stoull(text) : 0;
      if (!digits || length > req.body.size()) {
        finish(false);
        return Error(res, 400, "Inference-Header-Content-Length '" + text + "' is not a length within the " +
                                   std::to_string(req.body.size()) + "-byte body");
      }
      header = req.body.substr(0, length);
      binary = req.body.substr(length);
    }
    InferRequest request;
    Status parsed = ParseInferRequest(header, binary, model, &request);
    if (!parsed.ok()) {
      finish(false);
      return Error(res, 400, parsed.message());
    }
    ModelPool::Lease session = model.Acquire(ticket);
    std::vector<std::vector<unsigned char>> outputs;
    std::vector<TensorView> ins;
    std::vector<MutableTensorView> outs;
    for (size_t k = 0; k < model.inputs().size(); ++k)
      ins.push_back({request.inputs[k].data(), model.inputs()[k].element_type,
                     Span<const int64_t>(model.inputs()[k].shape)});
    outputs.resize(model.outputs().size());
    for (size_t k = 0; k < model.outputs().size(); ++k) {
      outputs[k].assign(model.outputs()[k].byte_size, 0);
      outs.push_back({outputs[k].data(), model.outputs()[k].element_type,
                      Span<const int64_t>(model.outputs()[k].shape)});
    }
    Status ran = session->Run(Span<const TensorView>(ins.data(), ins.size()),
                              Span<const MutableTensorView>(outs.data(), outs.size()));
    if (!ran.ok()) {
      finish(false);
      return Error(res, 500, ran.message());
    }
    InferReply reply = InferResponse(model, request, outputs);
    if (reply.binary.empty()) {
      res.set_content(reply.json, "application/json");
    } else {
      res.set_header("Inference-Header-Content-Length", std::to_string(reply.json.size()));
      res.set_content(reply.json + reply.binary, "application/octet-stream");
    }
    finish(true);
  });
  s.http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    res.set_content(s.metrics.Text(s.models), "text/plain; version=0.0.4");
  });
  // Anything else, or a body the library refuses (over the limit), in the protocol's form.
  // (cpp-httplib parses an application/x-www-form-urlencoded body itself, up to 8 KiB: curl's
  // and urllib's default content type. Infer requests are JSON.)
  s.http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      return Error(res, 413, req.get_header_value("Content-Type") == "application/x-www-form-urlencoded"
                                 ? "the request body is too large for a form-encoded request: send it as "
                                   "Content-Type: application/json"
                                 : "the request body is too large");
    Error(res, res.status, res.status == 404 ? "not found" : "bad request");
  });
}

Server::~Server() = default;

bool Server::Serve() {
  Impl& s = *impl_;
  int port = s.options.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.options.host);
    if (port < 0) return false;
  } else if (!s.http.bind_to_port(s.options.host, port)) {
    return false;
  }
  if (s.listen_socket >= 0) ::listen(s.listen_socket, SOMAXCONN);
  bound_port_ = port;
  std::printf("hexir-serve: listening on %s:%d\n", s.options.host.c_str(), port);
  std::fflush(stdout);
  return s.http.listen_after_bind();
}

void Server::Stop() { impl_->http.stop(); }

}  // namespace hexir::serve

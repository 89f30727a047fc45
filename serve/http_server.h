// HttpServer: an HTTP/1.1 server whose connections cannot hold its workers.
//
// One thread owns every connection (epoll, non-blocking sockets): it reads requests as their
// bytes arrive (HttpRequestReader: sizes bounded while reading, chunked bodies included) and
// writes responses as the sockets take them. Only a complete request reaches a worker thread,
// which runs the handler and hands the response back; a client that sends slowly (a header line
// every few seconds), reads slowly or sits idle holds a socket and a buffer, never a worker.
//
//   - A request must arrive whole in time: its headers within header_timeout of its first byte,
//     its body within body_timeout (408 and the connection closed otherwise).
//   - An idle keep-alive connection is closed after idle_timeout; at max_connections, a new
//     connection closes the connection idle the longest (or, if none is idle, is refused).
//   - Pipelined requests on one connection are answered one at a time, in order.
//   - "Expect: 100-continue" is answered before the body is read (curl sends it).
//   - Stop(): no new connections; requests already received are answered (with "Connection:
//     close"), idle connections close; after shutdown_grace whatever is left is closed.
//
// Thread safety: Run() on one thread; Stop() from any thread. The handler runs on the workers,
// concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "serve/http_request.h"

namespace hexir::serve {

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // more headers
  std::string body;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port
  int workers = 4;
  int max_connections = 1024;
  double header_timeout_s = 10;
  double body_timeout_s = 60;
  double idle_timeout_s = 30;
  double shutdown_grace_s = 10;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  using BodyLimit = std::function<HttpRequestReader::BodyLimit(const HttpRequest&)>;
  // The response to a request the server refuses itself (status, message): a malformed or
  // oversized request, a timeout, a full server.
  using ErrorResponse = std::function<HttpResponse(int status, const std::string& message)>;

  HttpServer(HttpServerOptions options, Handler handler, BodyLimit body_limit, ErrorResponse error);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; false (with errno) when it cannot.
  bool Bind();
  int port() const;
  // Serves until Stop() and its grace end.
  void Run();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hexir::serve

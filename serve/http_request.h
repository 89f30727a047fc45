// HttpRequestReader: HTTP/1.1 requests parsed incrementally from a connection's bytes.
//
// Bytes are fed as they arrive; each complete request (request line, headers, a body of
// Content-Length bytes or of chunks) is queued, in order, so pipelined requests come out one
// after the other. Every size is bounded while reading, never after: the request line and
// header section (16 KiB together), the number of headers, and the body (a limit the caller
// gives per request, once its headers are known: a chunked body is refused as soon as its
// chunks pass it, not after it has been read). A malformed request ends the connection's
// reading with an error status and message.
//
// Ownership: owns its buffers. Thread safety: one connection's reader, one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hexir::serve {

struct HttpRequest {
  std::string method, target, version;                     // "POST", "/v2/...", "HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;
  bool keep_alive = true;     // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only if asked
  bool expects_continue = false;  // "Expect: 100-continue"
  // Set by the server when no one will read the answer (the client hung up, or the shutdown
  // grace ended): a handler passes it to its run as RunOptions::cancel.
  std::shared_ptr<std::atomic<bool>> abandoned;

  // The first value of header `name` (lower case), or empty.
  const std::string& Header(const std::string& name) const;
  bool HasHeader(const std::string& name) const;
};

class HttpRequestReader {
 public:
  static constexpr size_t kMaxHeaderBytes = 16 * 1024;  // request line and headers together
  static constexpr size_t kMaxHeaders = 100;

  // `body_limit(request)`: the most bytes the request's body may have, asked once its headers are
  // parsed; its `message` says why when a body passes it.
  struct BodyLimit {
    uint64_t bytes = 0;
    std::string message;  // completes "the request body of N bytes is over ..." / "... over ..."
  };
  explicit HttpRequestReader(std::function<BodyLimit(const HttpRequest&)> body_limit)
      : body_limit_(std::move(body_limit)) {}

  // Consumes `size` bytes; false once the stream is malformed or over a limit (error() says how;
  // nothing more is read from it).
  bool Feed(const char* data, size_t size);

  bool HasRequest() const { return !ready_.empty(); }
  HttpRequest TakeRequest();
  // Whether a request has begun (bytes of it arrived) but is not complete.
  bool InRequest() const { return state_ != State::kRequestLine || !buffer_.empty(); }
  // Whether the current request's headers are complete and its body is arriving.
  bool InBody() const { return state_ != State::kRequestLine && state_ != State::kHeaders; }
  // The request whose headers are complete and whose body is still arriving, if it asked for
  // "100 Continue" and it has not been given yet (the caller writes it, then calls ContinueSent).
  bool WantsContinue() const { return want_continue_; }
  void ContinueSent() { want_continue_ = false; }

  bool failed() const { return error_status_ != 0; }
  int error_status() const { return error_status_; }  // 400, 413, 431, 501
  const std::string& error() const { return error_; }

 private:
  enum class State { kRequestLine, kHeaders, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers };
  bool Fail(int status, std::string message);
  // The next line of buffer_ from pos_ (without its CR LF) into `line`; false if incomplete.
  bool NextLine(std::string& line);
  bool HeadersDone();
  bool Finish();

  std::function<BodyLimit(const HttpRequest&)> body_limit_;
  std::string buffer_;  // bytes not consumed yet
  size_t pos_ = 0;      // consumed bytes at the front of buffer_
  State state_ = State::kRequestLine;
  size_t header_bytes_ = 0;
  HttpRequest current_;
  BodyLimit limit_;
  uint64_t remaining_ = 0;  // of the Content-Length body, or of the current chunk
  bool want_continue_ = false;
  std::deque<HttpRequest> ready_;
  int error_status_ = 0;
  std::string error_;
};

}  // namespace hexir::serve

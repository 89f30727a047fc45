#include "serve/http_request.h"

#include <algorithm>
#include <cctype>

namespace hexir::serve {
namespace {

// A chunk-size line ("1a2b;ext=1") longer than this is no chunk size.
constexpr size_t kMaxChunkLine = 1024;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// A decimal byte count of at most 18 digits; false otherwise.
bool ParseLength(const std::string& text, uint64_t* value) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(text);
  return true;
}

}  // namespace

const std::string& HttpRequest::Header(const std::string& name) const {
  static const std::string kNone;
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return kNone;
}

bool HttpRequest::HasHeader(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return h.first == name; });
}

bool HttpRequestReader::Fail(int status, std::string message) {
  error_status_ = status;
  error_ = std::move(message);
  buffer_.clear();
  pos_ = 0;
  return false;
}

bool HttpRequestReader::NextLine(std::string& line) {
  size_t end = buffer_.find('\n', pos_);
  if (end == std::string::npos) return false;
  size_t stop = end > pos_ && buffer_[end - 1] == '\r' ? end - 1 : end;
  line.assign(buffer_, pos_, stop - pos_);
  pos_ = end + 1;
  return true;
}

HttpRequest HttpRequestReader::TakeRequest() {
  HttpRequest r = std::move(ready_.front());
  ready_.pop_front();
  return r;
}

bool HttpRequestReader::Finish() {
  ready_.push_back(std::move(current_));
  current_ = HttpRequest();
  state_ = State::kRequestLine;
  header_bytes_ = 0;
  want_continue_ = false;
  return true;
}

bool HttpRequestReader::HeadersDone() {
  HttpRequest& r = current_;
  const std::string& connection = r.Header("connection");
  std::string lower = Lower(connection);
  r.keep_alive = r.version == "HTTP/1.1" ? lower.find("close") == std::string::npos
                                         : lower.find("keep-alive") != std::string::npos;
  bool chunked = false;
  if (r.HasHeader("transfer-encoding")) {
    if (Lower(Trim(r.Header("transfer-encoding"))) != "chunked")
      return Fail(501, "Transfer-Encoding '" + r.Header("transfer-encoding") + "' is not supported (only chunked)");
    if (r.HasHeader("content-length"))
      return Fail(400, "a request may not have both Content-Length and Transfer-Encoding");
    chunked = true;
  }
  uint64_t length = 0;
  if (r.HasHeader("content-length") && !ParseLength(Trim(r.Header("content-length")), &length))
    return Fail(400, "Content-Length '" + r.Header("content-length") + "' is not a number of bytes");
  limit_ = body_limit_(r);
  r.expects_continue = Lower(Trim(r.Header("expect"))) == "100-continue";
  if (chunked) {
    state_ = State::kChunkSize;
    want_continue_ = r.expects_continue;
    return true;
  }
  if (length > limit_.bytes)
    return Fail(413, "the request body of " + std::to_string(length) + " bytes is over " + limit_.message);
  if (length == 0) return Finish();
  remaining_ = length;
  r.body.reserve(length);
  state_ = State::kBody;
  want_continue_ = r.expects_continue;
  return true;
}

bool HttpRequestReader::Feed(const char* data, size_t size) {
  if (failed()) return false;
  buffer_.append(data, size);
  std::string line;
  bool progress = true;
  while (progress && !failed()) {
    progress = false;
    switch (state_) {
      case State::kRequestLine:
      case State::kHeaders: {
        size_t before = pos_;
        if (!NextLine(line)) {
          if (header_bytes_ + buffer_.size() - pos_ > kMaxHeaderBytes)
            return Fail(431, "the request line and headers are over " + std::to_string(kMaxHeaderBytes) + " bytes");
          break;
        }
        header_bytes_ += pos_ - before;
        if (header_bytes_ > kMaxHeaderBytes)
          return Fail(431, "the request line and headers are over " + std::to_string(kMaxHeaderBytes) + " bytes");
        progress = true;
        if (state_ == State::kRequestLine) {
          if (line.empty()) continue;  // blank lines before a request are ignored (RFC 9112)
          size_t a = line.find(' '), b = line.rfind(' ');
          if (a == std::string::npos || a == b)
            return Fail(400, "malformed request line");
          current_.method = line.substr(0, a);
          current_.target = line.substr(a + 1, b - a - 1);
          current_.version = line.substr(b + 1);
          if (current_.version != "HTTP/1.1" && current_.version != "HTTP/1.0")
            return Fail(400, "unsupported HTTP version '" + current_.version + "'");
          state_ = State::kHeaders;
          continue;
        }
        if (line.empty()) {
          if (!HeadersDone()) return false;
          continue;
        }
        size_t colon = line.find(':');
        if (colon == std::string::npos || colon == 0) return Fail(400, "malformed header line");
        if (current_.headers.size() >= kMaxHeaders)
          return Fail(431, "more than " + std::to_string(kMaxHeaders) + " headers");
        current_.headers.emplace_back(Lower(line.substr(0, colon)), Trim(line.substr(colon + 1)));
        continue;
      }
      case State::kBody: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, buffer_.size() - pos_));
        if (take == 0) break;
        current_.body.append(buffer_, pos_, take);
        pos_ += take;
        remaining_ -= take;
        progress = true;
        if (remaining_ == 0) Finish();
        continue;
      }
      case State::kChunkSize: {
        if (!NextLine(line)) {
          if (buffer_.size() - pos_ > kMaxChunkLine) return Fail(400, "malformed chunk size");
          break;
        }
        progress = true;
        std::string hex = Trim(line.substr(0, line.find(';')));
        if (hex.empty() || hex.size() > 15 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
          return Fail(400, "malformed chunk size '" + hex.substr(0, 32) + "'");
        uint64_t chunk = std::stoull(hex, nullptr, 16);
        if (chunk == 0) {
          state_ = State::kTrailers;
          continue;
        }
        // Refused as soon as the chunks pass the limit, before their bytes are kept.
        if (chunk > limit_.bytes - std::min<uint64_t>(limit_.bytes, current_.body.size()))
          return Fail(413, "the request body is over " + limit_.message);
        remaining_ = chunk;
        state_ = State::kChunkData;
        continue;
      }
      case State::kChunkData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, buffer_.size() - pos_));
        if (take == 0) break;
        current_.body.append(buffer_, pos_, take);
        pos_ += take;
        remaining_ -= take;
        progress = true;
        if (remaining_ == 0) state_ = State::kChunkEnd;
        continue;
      }
      case State::kChunkEnd: {
        if (!NextLine(line)) {
          if (buffer_.size() - pos_ > 2) return Fail(400, "a chunk is longer than its size says");
          break;
        }
        if (!line.empty()) return Fail(400, "a chunk is longer than its size says");
        progress = true;
        state_ = State::kChunkSize;
        continue;
      }
      case State::kTrailers: {
        size_t before = pos_;
        if (!NextLine(line)) {
          if (header_bytes_ + buffer_.size() - pos_ > kMaxHeaderBytes)
            return Fail(431, "the request's trailers are over " + std::to_string(kMaxHeaderBytes) + " bytes");
          break;
        }
        header_bytes_ += pos_ - before;
        progress = true;
        if (line.empty()) Finish();  // trailer fields are read and dropped
        continue;
      }
    }
  }
  buffer_.erase(0, pos_);
  pos_ = 0;
  return !failed();
}

}  // namespace hexir::serve

// HttpRequestReader on its own: requests fed whole, byte by byte and pipelined come out the
// same; every limit holds while reading; malformed requests are refused with their status.
#include "serve/http_request.h"

#include <catch2/catch.hpp>

#include <string>

namespace hexir::serve {
namespace {

HttpRequestReader::BodyLimit Limit(uint64_t bytes) { return {bytes, "the " + std::to_string(bytes) + " bytes allowed"}; }

HttpRequestReader Reader(uint64_t limit = 1000) {
  return HttpRequestReader([limit](const HttpRequest&) { return Limit(limit); });
}

const std::string kPost = "POST /v2/models/m/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
const std::string kChunked =
    "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nTrailer: t\r\n\r\n";

TEST_CASE("requests come out whole, however their bytes arrive", "[serve]") {
  for (const std::string& text : {kPost, kChunked}) {
    for (size_t piece : {text.size(), size_t{1}, size_t{7}}) {
      HttpRequestReader reader = Reader();
      for (size_t i = 0; i < text.size(); i += piece) REQUIRE(reader.Feed(text.data() + i, std::min(piece, text.size() - i)));
      REQUIRE(reader.HasRequest());
      HttpRequest r = reader.TakeRequest();
      CHECK(r.method == "POST");
      CHECK(r.body == "hello");
      CHECK(r.keep_alive);
      CHECK_FALSE(reader.HasRequest());
      CHECK_FALSE(reader.InRequest());
    }
  }
}

TEST_CASE("pipelined requests come out in order", "[serve]") {
  HttpRequestReader reader = Reader();
  std::string two = kPost + "GET /v2 HTTP/1.0\r\n\r\n" + "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n";
  REQUIRE(reader.Feed(two.data(), two.size()));
  CHECK(reader.TakeRequest().target == "/v2/models/m/infer");
  HttpRequest second = reader.TakeRequest();
  CHECK(second.target == "/v2");
  CHECK_FALSE(second.keep_alive);  // HTTP/1.0 without keep-alive
  HttpRequest third = reader.TakeRequest();
  CHECK(third.Header("connection") == "close");
  CHECK_FALSE(third.keep_alive);
  CHECK_FALSE(reader.HasRequest());
}

TEST_CASE("limits hold while reading, and malformed requests are refused", "[serve]") {
  SECTION("Content-Length over the limit: refused from the header") {
    HttpRequestReader reader = Reader(4);
    CHECK_FALSE(reader.Feed(kPost.data(), kPost.find("hello")));
    CHECK(reader.error_status() == 413);
    CHECK(reader.error() == "the request body of 5 bytes is over the 4 bytes allowed");
  }
  SECTION("chunks passing the limit: refused at the chunk that passes it") {
    HttpRequestReader reader = Reader(4);
    std::string head = "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\n";
    CHECK_FALSE(reader.Feed(head.data(), head.size()));
    CHECK(reader.error_status() == 413);
    CHECK(reader.error() == "the request body is over the 4 bytes allowed");
  }
  SECTION("headers over 16 KiB, even without a line end") {
    HttpRequestReader reader = Reader();
    std::string head = "GET / HTTP/1.1\r\nX: " + std::string(20000, 'a');
    CHECK_FALSE(reader.Feed(head.data(), head.size()));
    CHECK(reader.error_status() == 431);
  }
  SECTION("malformed") {
    for (const auto& [text, status] : std::vector<std::pair<std::string, int>>{
             {"GARBAGE\r\n\r\n", 400},
             {"GET / HTTP/2.0\r\n\r\n", 400},
             {"GET / HTTP/1.1\r\nno colon\r\n\r\n", 400},
             {"POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400},
             {"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
             {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
             {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
             {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400}}) {
      CAPTURE(text);
      HttpRequestReader reader = Reader();
      CHECK_FALSE(reader.Feed(text.data(), text.size()));
      CHECK(reader.error_status() == status);
    }
  }
  SECTION("100-continue is asked for once the headers are in") {
    HttpRequestReader reader = Reader();
    std::string head = "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
    REQUIRE(reader.Feed(head.data(), head.size()));
    CHECK(reader.WantsContinue());
    CHECK(reader.InBody());
    reader.ContinueSent();
    REQUIRE(reader.Feed("ok", 2));
    CHECK(reader.TakeRequest().body == "ok");
  }
}

}  // namespace
}  // namespace hexir::serve

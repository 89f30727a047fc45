#include "serve/http_server.h"

#include <new>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace hexir::serve {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string Serialize(const HttpResponse& r, bool keep_alive, bool http10) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
  if (!keep_alive) out += "Connection: close\r\n";
  else if (http10) out += "Connection: keep-alive\r\n";
  out += "\r\n";
  out += r.body;
  return out;
}

// Bytes read from a socket per readable event before other connections get their turn.
constexpr size_t kReadBurst = 256 * 1024;

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  Handler handler;
  BodyLimit body_limit;
  ErrorResponse error_response;

  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  int bound_port = 0;
  std::atomic<bool> stop_requested{false};

  struct Connection {
    int fd;
    HttpRequestReader reader;
    std::string out;       // bytes to write
    size_t written = 0;
    bool busy = false;     // a request of it is with a worker
    bool closing = false;  // close once `out` is written
    bool reading = true;   // EPOLLIN wanted
    Clock::time_point last_activity, request_start;
    bool in_request = false;
    uint32_t events = 0;   // registered with epoll
    bool registered = false;
    std::shared_ptr<std::atomic<bool>> abandoned;  // the request with a worker's (HttpRequest)
    bool peer_closed = false;  // the client closed its side while a worker had its request
    Connection(int f, BodyLimit limit) : fd(f), reader(std::move(limit)) {}
  };
  std::map<uint64_t, std::unique_ptr<Connection>> connections;
  bool listen_paused = false;
  Clock::time_point listen_resume;
  uint64_t next_id = 1;

  // Work for the workers, and their answers back.
  struct Job {
    uint64_t id;
    HttpRequest request;
  };
  struct Done {
    uint64_t id;
    HttpResponse response;
    bool keep_alive, http10;
  };
  std::mutex mutex;
  std::condition_variable work_ready;
  std::deque<Job> jobs;
  std::deque<Done> done;
  bool workers_stop = false;
  std::vector<std::thread> workers;

  void Wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof(one));
  }

  // Registers what the connection waits for: its next bytes (only while no request of it is
  // with a worker and nothing is left to write: pipelined requests wait in the socket), or room
  // to write. (Level-triggered: a half-closed socket is not watched while its answer is made.)
  void Watch(uint64_t id, Connection& c) {
    uint32_t want = 0;
    if (c.reading && !c.busy && c.out.size() == c.written && !c.closing) want |= EPOLLIN | EPOLLRDHUP;
    // While a worker has its request: whether the client closes (once; the flag stays set).
    if (c.busy && !c.peer_closed) want |= EPOLLRDHUP;
    if (c.out.size() > c.written) want |= EPOLLOUT;
    if (c.registered && want == c.events) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_fd, c.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &ev);
    c.registered = true;
    c.events = want;
  }

  void Close(uint64_t id) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second->fd, nullptr);
    ::close(it->second->fd);
    // Its request's run, if one is under way, stops: no one will read the answer.
    if (it->second->busy && it->second->abandoned) it->second->abandoned->store(true);
    connections.erase(it);
  }

  // Queues `response` and writes what the socket takes now.
  void Respond(uint64_t id, Connection& c, const HttpResponse& response, bool keep_alive, bool http10) {
    if (stop_requested.load()) keep_alive = false;
    c.out.append(Serialize(response, keep_alive, http10));
    if (!keep_alive) c.closing = true;
    Write(id, c);
  }

  // Refuses the connection's current request itself and closes after the answer.
  void Refuse(uint64_t id, Connection& c, int status, const std::string& message) {
    c.reading = false;
    Respond(id, c, error_response(status, message), /*keep_alive=*/false, false);
  }

  void Write(uint64_t id, Connection& c) {
    while (c.written < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return Close(id);  // the client left
      c.written += static_cast<size_t>(n);
      c.last_activity = Clock::now();
    }
    if (c.written == c.out.size()) {
      c.out.clear();
      c.written = 0;
      if (c.closing) return Close(id);
      Dispatch(id, c);
      if (connections.count(id) == 0) return;
    }
    Watch(id, c);
  }

  // Hands the connection's next complete request to a worker, if it has one and none is out.
  void Dispatch(uint64_t id, Connection& c) {
    if (c.busy || c.closing || c.out.size() > c.written) return;
    if (c.reader.HasRequest()) {
      HttpRequest r = c.reader.TakeRequest();
      c.abandoned = std::make_shared<std::atomic<bool>>(false);
      r.abandoned = c.abandoned;
      c.busy = true;
      c.in_request = c.reader.InRequest();
      c.request_start = Clock::now();
      {
        std::lock_guard<std::mutex> lock(mutex);
        jobs.push_back({id, std::move(r)});
      }
      work_ready.notify_one();
    } else if (c.reader.WantsContinue()) {
      c.reader.ContinueSent();
      c.out.append("HTTP/1.1 100 Continue\r\n\r\n");
      Write(id, c);
    } else if (stop_requested.load() && !c.reader.InRequest()) {
      Close(id);  // nothing more to answer
    }
  }

  void Read(uint64_t id, Connection& c) {
    char buf[64 * 1024];
    size_t total = 0;
    while (total < kReadBurst) {
      ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return Close(id);  // the client closed (or reset) its side
      total += static_cast<size_t>(n);
      c.last_activity = Clock::now();
      if (!c.in_request) {
        c.in_request = true;
        c.request_start = c.last_activity;
      }
      if (!c.reader.Feed(buf, static_cast<size_t>(n))) {
        if (c.busy) {  // answered after the request before it
          c.reading = false;
          c.closing = true;
          break;
        }
        return Refuse(id, c, c.reader.error_status(), c.reader.error());
      }
      if (c.reader.HasRequest() || c.busy) break;  // the next request waits for this one
    }
    Dispatch(id, c);
    if (connections.count(id)) Watch(id, c);
  }

  void Accept() {
    while (true) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: the pending connection stays pending and the listening socket
          // readable, so epoll would wake at once for ever (98% CPU). Stop listening for a
          // moment and free a descriptor: the connection idle the longest closes.
          PauseListening();
          CloseLongestIdle();
        }
        return;  // EAGAIN: nothing more to accept now
      }
      if (static_cast<int>(connections.size()) >= options.max_connections) {
        // Make room by closing the connection idle the longest; refuse if none is idle.
        uint64_t oldest = LongestIdle();
        if (oldest == 0) {
          std::string busy = Serialize(error_response(503, "the server has " + std::to_string(connections.size()) +
                                                                 " connections, its most, none idle; try again"),
                                       false, false);
          (void)!::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
          ::close(fd);
          continue;
        }
        Close(oldest);
      }
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      uint64_t id = next_id++;
      auto c = std::make_unique<Connection>(fd, body_limit);
      c->last_activity = Clock::now();
      Connection& ref = *c;
      connections.emplace(id, std::move(c));
      Watch(id, ref);
    }
  }

  // The listening socket out of epoll until listen_resume (a descriptor shortage).
  void PauseListening() {
    if (listen_paused || listen_fd < 0) return;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    listen_paused = true;
    listen_resume = Clock::now() + std::chrono::milliseconds(100);
  }
  void ResumeListening() {
    if (!listen_paused || listen_fd < 0 || Clock::now() < listen_resume) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
    listen_paused = false;
  }
  // The connection idle the longest (no request under way or being read, nothing to write), or 0.
  uint64_t LongestIdle() const {
    uint64_t oldest = 0;
    Clock::time_point when = Clock::time_point::max();
    for (auto& [id, c] : connections)
      if (!c->busy && !c->in_request && c->out.empty() && c->last_activity < when) {
        oldest = id;
        when = c->last_activity;
      }
    return oldest;
  }
  void CloseLongestIdle() {
    if (uint64_t oldest = LongestIdle()) Close(oldest);
  }

  // Timeouts: a request that does not arrive whole in time, a connection idle too long.
  void Sweep() {
    Clock::time_point now = Clock::now();
    std::vector<std::pair<uint64_t, int>> late;  // (id, 408) or (id, 0: close quietly)
    for (auto& [id, c] : connections) {
      if (c->busy || c->out.size() > c->written) continue;
      if (c->in_request && c->reader.InRequest()) {
        double age = Seconds(now - c->request_start);
        if ((!c->reader.InBody() && age > options.header_timeout_s) || age > options.body_timeout_s)
          late.push_back({id, 408});
      } else if (Seconds(now - c->last_activity) > options.idle_timeout_s) {
        late.push_back({id, 0});
      }
    }
    for (auto [id, status] : late) {
      Connection& c = *connections[id];
      if (status == 0) {
        Close(id);
        continue;
      }
      bool headers = !c.reader.InBody();
      Refuse(id, c, 408,
             headers ? "the request's headers did not arrive within " + FormatSeconds(options.header_timeout_s)
                     : "the request did not arrive whole within " + FormatSeconds(options.body_timeout_s));
    }
  }

  static std::string FormatSeconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
  }

  void Finished() {
    std::deque<Done> ready;
    {
      std::lock_guard<std::mutex> lock(mutex);
      ready.swap(done);
    }
    for (Done& d : ready) {
      auto it = connections.find(d.id);
      if (it == connections.end()) continue;  // the client left meanwhile
      Connection& c = *it->second;
      c.busy = false;
      if (c.in_request && !c.reader.InRequest()) c.in_request = false;
      c.last_activity = Clock::now();
      Respond(d.id, c, d.response, d.keep_alive && !c.closing, d.http10);
    }
  }

  void Work() {
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_ready.wait(lock, [&] { return workers_stop || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      HttpResponse response;
      try {
        response = handler(job.request);
      } catch (const std::bad_alloc&) {
        // Out of memory on a request's path (its tensors, its answer): that request fails.
        response = error_response(500, "out of memory answering the request");
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        done.push_back({job.id, std::move(response), job.request.keep_alive, job.request.version == "HTTP/1.0"});
      }
      Wake();
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler, BodyLimit body_limit, ErrorResponse error)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  impl_->body_limit = std::move(body_limit);
  impl_->error_response = std::move(error);
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  impl_->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
}

HttpServer::~HttpServer() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.workers_stop = true;
  }
  s.work_ready.notify_all();
  for (std::thread& t : s.workers) t.join();
  for (auto& [id, c] : s.connections) ::close(c->fd);
  if (s.listen_fd >= 0) ::close(s.listen_fd);
  if (s.epoll_fd >= 0) ::close(s.epoll_fd);
  if (s.wake_fd >= 0) ::close(s.wake_fd);
}

bool HttpServer::Bind() {
  Impl& s = *impl_;
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  std::string port = std::to_string(s.options.port);
  if (::getaddrinfo(s.options.host.c_str(), port.c_str(), &hints, &found) != 0) return false;
  for (addrinfo* a = found; a != nullptr && s.listen_fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      s.listen_fd = fd;
      sockaddr_storage bound{};
      socklen_t length = sizeof(bound);
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
      s.bound_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (s.listen_fd < 0 || s.epoll_fd < 0 || s.wake_fd < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;  // the listening socket
  ::epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.listen_fd, &ev);
  ev.data.u64 = UINT64_MAX;  // the wake-up eventfd
  ::epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.wake_fd, &ev);
  return true;
}

int HttpServer::port() const { return impl_->bound_port; }

void HttpServer::Stop() {
  impl_->stop_requested.store(true);
  impl_->Wake();
}

void HttpServer::Run() {
  Impl& s = *impl_;
  for (int i = 0; i < std::max(1, s.options.workers); ++i) s.workers.emplace_back([&s] { s.Work(); });
  bool stopping = false;
  Clock::time_point deadline{};
  Clock::time_point last_sweep = Clock::now();
  epoll_event events[256];
  while (true) {
    if (s.stop_requested.load() && !stopping) {
      // No new connections; idle ones close; requests already begun get the grace to finish.
      stopping = true;
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(s.options.shutdown_grace_s));
      ::epoll_ctl(s.epoll_fd, EPOLL_CTL_DEL, s.listen_fd, nullptr);
      ::close(s.listen_fd);
      s.listen_fd = -1;
      std::vector<uint64_t> idle;
      for (auto& [id, c] : s.connections)
        if (!c->busy && !c->in_request && c->out.empty() && !c->reader.HasRequest()) idle.push_back(id);
      for (uint64_t id : idle) s.Close(id);
    }
    if (stopping && (s.connections.empty() || Clock::now() >= deadline)) break;
    s.ResumeListening();
    int n = ::epoll_wait(s.epoll_fd, events, 256, s.listen_paused ? 20 : 250);
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == 0) {
        if (!stopping) s.Accept();
        continue;
      }
      if (id == UINT64_MAX) {
        uint64_t count;
        (void)!::read(s.wake_fd, &count, sizeof(count));
        s.Finished();
        continue;
      }
      auto it = s.connections.find(id);
      if (it == s.connections.end()) continue;
      Impl::Connection& c = *it->second;
      if (events[i].events & EPOLLOUT) s.Write(id, c);
      if (!s.connections.count(id)) continue;
      if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if (c.reading && !c.busy && c.out.empty()) {
          s.Read(id, c);
        } else if (events[i].events & (EPOLLHUP | EPOLLERR)) {
          s.Close(id);  // gone while its request was with a worker: the answer is dropped
        } else if ((events[i].events & EPOLLRDHUP) && !c.busy) {
          s.Close(id);
        } else if ((events[i].events & EPOLLRDHUP) && c.busy) {
          // The client closed (or half-closed) its connection before the answer: its run stops;
          // the answer is still written if the socket takes it.
          c.peer_closed = true;
          if (c.abandoned) c.abandoned->store(true);
          s.Watch(id, c);
        }
      }
    }
    if (Seconds(Clock::now() - last_sweep) >= 0.25) {
      last_sweep = Clock::now();
      s.Sweep();
    }
  }
  // Grace over (or nothing left): close what remains; workers finish their runs.
  std::vector<uint64_t> left;
  for (auto& [id, c] : s.connections) left.push_back(id);
  for (uint64_t id : left) s.Close(id);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.workers_stop = true;
    s.jobs.clear();
  }
  s.work_ready.notify_all();
  for (std::thread& t : s.workers) t.join();
  s.workers.clear();
}

}  // namespace hexir::serve

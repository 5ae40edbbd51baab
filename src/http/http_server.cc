#include "http/http_server.h"

#include <httplib.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "common/log.h"
#include "http/connection_pool.h"

namespace mooncake::http {

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
};

namespace {

// cpp-httplib's task queue over a ConnectionPool (threads as connections need them).
class PoolQueue final : public httplib::TaskQueue {
 public:
  PoolQueue(size_t max_threads, std::chrono::milliseconds idle_exit)
      : pool_(max_threads, idle_exit) {}
  void enqueue(std::function<void()> fn) override { pool_.Enqueue(std::move(fn)); }
  void shutdown() override { pool_.Shutdown(); }

 private:
  ConnectionPool pool_;
};

Request FromHttplib(const httplib::Request& r) {
  Request out{r.method, r.path, r.body, r.remote_addr, {}};
  for (const auto& [k, v] : r.params) out.query.emplace_back(k, v);
  return out;
}

void ToHttplib(const Response& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [k, v] : in.headers) out.set_header(k, v);
  if (!in.stream) {
    out.set_content(in.body, in.content_type);
    return;
  }
  // cpp-httplib calls the provider until done() or a false return; ours writes the whole
  // stream in one call. An empty write would end its loop early: none is passed on.
  out.set_chunked_content_provider(in.content_type,
                                   [stream = in.stream](size_t, httplib::DataSink& sink) {
                                     bool open = true;
                                     try {
                                       stream([&](std::string_view piece) {
                                         if (open && !piece.empty())
                                           open = sink.write(piece.data(), piece.size());
                                         return open;
                                       });
                                     } catch (const std::exception& e) {
                                       log::Warn("http: a streamed body ended early: {}", e.what());
                                       open = false;  // the client sees the body cut short
                                     }
                                     if (open) sink.done();
                                     return open;
                                   });
}

// A handler that throws answers 500 naming the path instead of ending the job.
httplib::Server::Handler Wrap(Handler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      ToHttplib(handler(FromHttplib(req)), res);
    } catch (const std::exception& e) {
      log::Warn("http: {} {}: {}", req.method, req.path, e.what());
      ToHttplib(Response{500, "text/plain; charset=utf-8", "internal error\n", {}}, res);
    }
  };
}

// Timeouts, body limit, socket options and the connection pool of `s`. Returns where the
// listening socket's descriptor lands once bound (-1 before).
std::shared_ptr<std::atomic<int>> Configure(httplib::Server& s, const ServerOptions& options) {
  const auto secs = [](std::chrono::milliseconds d) {
    return std::make_pair(static_cast<time_t>(d.count() / 1000),
                          static_cast<time_t>(d.count() % 1000 * 1000));
  };
  s.set_read_timeout(secs(options.read_timeout).first, secs(options.read_timeout).second);
  s.set_write_timeout(secs(options.write_timeout).first, secs(options.write_timeout).second);
  s.set_keep_alive_timeout(std::max<time_t>(1, secs(options.read_timeout).first));
  s.set_payload_max_length(options.max_body_bytes);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, with which a second job
  // given the same port would share it in silence instead of failing. The socket is kept to
  // raise its backlog once bound.
  // TCP_DEFER_ACCEPT: a connection is accepted once its first bytes came (or after the read
  // deadline): one that sends nothing waits in the kernel, not on a thread that polls for it.
  auto listening = std::make_shared<std::atomic<int>>(-1);
  const int defer_s = static_cast<int>(std::max<int64_t>(1, options.read_timeout.count() / 1000));
  s.set_socket_options([listening, defer_s](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    ::setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s);
    listening->store(sock);
  });
  const size_t threads = static_cast<size_t>(std::max(1, options.threads));
  const std::chrono::milliseconds idle_exit = options.idle_thread_exit;
  s.new_task_queue = [threads, idle_exit] { return new PoolQueue(threads, idle_exit); };
  return listening;
}

// Each route's handler; 405 on a known path with another method, 404 otherwise.
Status AddRoutes(httplib::Server& s, std::vector<Route> routes) {
  std::set<std::string> paths;
  for (Route& r : routes) {
    paths.insert(r.path);
    if (r.method == "GET") {
      s.Get(r.path, Wrap(std::move(r.handler)));
    } else if (r.method == "POST") {
      s.Post(r.path, Wrap(std::move(r.handler)));
    } else {
      return InvalidArgument("http: route " + r.path + ": method " + r.method +
                             " is not served (GET, POST)");
    }
  }
  // Unmatched requests: 405 on a known path (another method), 404 otherwise. cpp-httplib calls
  // this for every status >= 400, a handler's own answers too: those have a body, left as is.
  s.set_error_handler([paths](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty() && res.status == 404 && paths.count(req.path) > 0) res.status = 405;
    if (res.body.empty()) {
      const char* what = res.status == 404   ? "not found"
                         : res.status == 405 ? "method not allowed"
                         : res.status == 413 ? "request body too large"
                                             : "error";
      res.set_content(std::to_string(res.status) + " " + what + "\n", "text/plain; charset=utf-8");
    }
  });
  return Status::Ok();
}

// Binds options.host:options.port (0: any free port) and raises the listen backlog of the bound
// socket `listening`. Sets `*bound_port`.
Status Bind(httplib::Server& s, const ServerOptions& options, const std::atomic<int>& listening,
            int* bound_port) {
  errno = 0;
  int port = options.port;
  bool bound = false;
  if (port == 0) {
    port = s.bind_to_any_port(options.host);
    bound = port > 0;
  } else {
    bound = s.bind_to_port(options.host, port);
  }
  if (!bound) {
    const int err = errno;
    const std::string reason = err == EADDRINUSE ? "address already in use"
                               : err != 0        ? std::strerror(err)
                                                 : "cannot bind";
    return IoError("http: cannot listen on " + options.host + ":" + std::to_string(options.port) +
                   ": " + reason);
  }
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's library): in a burst of
  // connects, those past it had their SYN dropped and retried a second later. Listening again
  // on the bound socket raises it (the kernel caps it at net.core.somaxconn).
  if (const int sock = listening.load(); sock >= 0 && ::listen(sock, SOMAXCONN) != 0) {
    log::Warn("http: {}:{}: cannot raise the listen backlog: {}", options.host, port,
              std::strerror(errno));
  }
  *bound_port = port;
  return Status::Ok();
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ServerOptions& options,
                                                      std::vector<Route> routes) {
  auto impl = std::make_unique<Impl>();
  httplib::Server& s = impl->server;
  const auto listening = Configure(s, options);
  MC_RETURN_IF_ERROR(AddRoutes(s, std::move(routes)));
  int port = 0;
  MC_RETURN_IF_ERROR(Bind(s, options, *listening, &port));
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  // stop() before the loop is running does nothing (the loop would then never end): Start
  // returns only once it runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!raw->server.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!raw->server.is_running()) {
    // A loop that never started cannot be stopped or joined: leave it (and what it uses) be.
    impl->thread.detach();
    (void)impl.release();
    return IoError("http: the server on " + options.host + ":" + std::to_string(port) +
                   " did not start within 10 s");
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port));
}

void HttpServer::Stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace mooncake::http

#pragma once

// A small HTTP/1.1 server for the job's endpoints (/metrics, /health; the OpenAI-compatible API
// builds on it). It wraps cpp-httplib so that no other library includes <httplib.h>: handlers see
// plain structs. Every connection has read and write deadlines and a bounded body. Each connection
// is served by a thread of its own from accept to close (cpp-httplib's model), started when it
// comes (connection_pool.h): idle connections hold threads, not the requests of others.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace mooncake::http {

struct Request {
  std::string method;
  std::string path;
  std::string body;
  std::string remote;  // the peer's address
  std::vector<std::pair<std::string, std::string>> query;
};

// Writes one piece of a streamed body to the client at once; false once the client has gone
// (or a write missed its deadline): the stream should end.
using StreamWrite = std::function<bool(std::string_view)>;

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: the body is streamed instead (chunked transfer encoding). The server sends the status
  // and headers, then calls `stream` once on the handler's thread; each write goes out as it is
  // made; the body ends when `stream` returns. `body` is ignored.
  std::function<void(const StreamWrite& write)> stream = nullptr;
};

using Handler = std::function<Response(const Request&)>;

struct Route {
  std::string method;  // "GET" or "POST"
  std::string path;    // exact
  Handler handler;
};

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port (port() says which)
  std::chrono::milliseconds read_timeout{5000};
  std::chrono::milliseconds write_timeout{5000};
  size_t max_body_bytes = 1 << 20;
  // The most connections served at once (one thread each; more wait to be accepted by a
  // thread). An idle connection holds its thread until read_timeout.
  int threads = 4;
  std::chrono::milliseconds idle_thread_exit{10'000};  // a thread without work this long ends
};

class HttpServer {
 public:
  // Binds and starts serving `routes` on a thread of its own; any other path is 404, another
  // method on a known path 405. Unavailable names the address and the reason (a port in use).
  static Result<std::unique_ptr<HttpServer>> Start(const ServerOptions& options,
                                                   std::vector<Route> routes);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Stops accepting, waits for the handlers running now, joins the thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace mooncake::http

// The server as a client sees it, over 127.0.0.1: routes, 404 and 405, a handler that throws
// (500, the server goes on), a body over the limit (413), a port already in use (an error naming
// it), an idle connection closed at the read deadline, Stop() while a client is connected, and a
// streamed body whose pieces reach the client as they are written, and 2000 idle connections
// while a request is served.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace mooncake::http {
namespace {

std::unique_ptr<HttpServer> StartTestServer(ServerOptions o = {}) {
  o.host = "127.0.0.1";
  auto s = HttpServer::Start(
      o,
      {{"GET", "/hello",
        [](const Request& r) {
          std::string who = "world";
          for (const auto& [k, v] : r.query) {
            if (k == "who") who = v;
          }
          return Response{200, "text/plain", "hello " + who + "\n", {{"X-Test", "1"}}};
        }},
       {"POST", "/echo",
        [](const Request& r) {
          return Response{201, "text/plain", r.body, {}};
        }},
       {"GET", "/throws", [](const Request&) -> Response { throw std::runtime_error("boom"); }}});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(HttpServer, ServesRoutesAndAnswersUnknownOnesWith404Or405) {
  auto server = StartTestServer();
  ASSERT_TRUE(server);
  ASSERT_GT(server->port(), 0);
  httplib::Client c("127.0.0.1", server->port());
  auto r = c.Get("/hello?who=mooncake");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello mooncake\n");
  EXPECT_EQ(r->get_header_value("X-Test"), "1");
  auto e = c.Post("/echo", "payload", "text/plain");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 201);
  EXPECT_EQ(e->body, "payload");
  auto missing = c.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto wrong_method = c.Post("/hello", "", "text/plain");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  auto thrown = c.Get("/throws");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
  auto again = c.Get("/hello");  // the server goes on after a handler threw
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, "hello world\n");
}

TEST(HttpServer, RefusesABodyOverTheLimit) {
  ServerOptions o;
  o.max_body_bytes = 1024;
  auto server = StartTestServer(o);
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", server->port());
  auto r = c.Post("/echo", std::string(4096, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
}

TEST(HttpServer, APortInUseIsAnErrorNamingIt) {
  auto first = StartTestServer();
  ASSERT_TRUE(first);
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = first->port();
  auto second = HttpServer::Start(o, {});
  ASSERT_FALSE(second.ok());
  const std::string message = second.status().ToString();
  EXPECT_NE(message.find("127.0.0.1:" + std::to_string(first->port())), std::string::npos)
      << message;
  EXPECT_NE(message.find("address already in use"), std::string::npos) << message;
}

// A client that connects and sends nothing is closed at the read deadline, and meanwhile others
// are served; Stop() returns with it connected.
TEST(HttpServer, AnIdleConnectionNeitherBlocksOthersNorStop) {
  ServerOptions o;
  o.read_timeout = std::chrono::milliseconds(500);
  o.threads = 2;
  auto server = StartTestServer(o);
  ASSERT_TRUE(server);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  httplib::Client c("127.0.0.1", server->port());
  auto r = c.Get("/hello");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  char byte = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);  // closed by the server, not by us
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const int idle = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  server->Stop();
  server->Stop();  // idempotent
  ::close(idle);
  ::close(fd);
}

// The handler writes a piece, then waits until the client has it before writing the next: a
// server that held the body until the handler ends would keep the client from ever seeing the
// first piece in time. A client that goes away makes a later write return false.
TEST(HttpServer, AStreamedBodyReachesTheClientPieceByPiece) {
  std::mutex mutex;
  std::condition_variable cv;
  std::string received;
  bool second_write_failed = false, stream_ended = false;
  ServerOptions o;
  o.host = "127.0.0.1";
  auto server = HttpServer::Start(
      o, {{"GET", "/stream", [&](const Request& r) {
             Response out{200, "text/event-stream", "", {}};
             const bool leave = !r.query.empty();
             out.stream = [&, leave](const StreamWrite& write) {
               EXPECT_TRUE(write("one\n"));
               {
                 std::unique_lock<std::mutex> lock(mutex);
                 const bool seen = cv.wait_for(lock, std::chrono::seconds(10), [&] {
                   return received.find("one") != std::string::npos;
                 });
                 EXPECT_TRUE(seen) << "the client did not get the first piece before the second";
               }
               if (leave) {
                 // The client closes once it has the first piece; writes fail soon after.
                 bool ok = true;
                 for (int i = 0; i < 200 && ok; ++i) {
                   ok = write(std::string(4096, 'x'));
                   std::this_thread::sleep_for(std::chrono::milliseconds(5));
                 }
                 std::lock_guard<std::mutex> lock(mutex);
                 second_write_failed = !ok;
               } else {
                 EXPECT_TRUE(write("two\n"));
               }
               std::lock_guard<std::mutex> lock(mutex);
               stream_ended = true;
               cv.notify_all();
             };
             return out;
           }}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client c("127.0.0.1", (*server)->port());
  auto r = c.Get("/stream", [&](const char* data, size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    received.append(data, n);
    cv.notify_all();
    return true;
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(received, "one\ntwo\n");

  received.clear();
  stream_ended = false;
  httplib::Client leaver("127.0.0.1", (*server)->port());
  auto left = leaver.Get("/stream?leave=1", [&](const char* data, size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    received.append(data, n);
    cv.notify_all();
    return false;  // cancels: the client closes the connection
  });
  EXPECT_FALSE(left);
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return stream_ended; }));
  EXPECT_TRUE(second_write_failed) << "writes to a client that left kept succeeding";
}

// `n` connections to the server, made at once (non-blocking connects, then waited for):
// the descriptors of those that connected within `deadline`.
std::vector<int> ConnectMany(int port, int n, std::chrono::seconds deadline) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<pollfd> pending;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (rc == 0 || errno == EINPROGRESS) {
      pending.push_back({fd, POLLOUT, 0});
    } else {
      ::close(fd);
    }
  }
  std::vector<int> connected;
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!pending.empty() && std::chrono::steady_clock::now() < end) {
    if (::poll(pending.data(), pending.size(), 100) <= 0) continue;
    std::vector<pollfd> still;
    for (const pollfd& p : pending) {
      if (p.revents == 0) {
        still.push_back({p.fd, POLLOUT, 0});
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0 && (p.revents & POLLOUT)) {
        connected.push_back(p.fd);
      } else {
        ::close(p.fd);
      }
    }
    pending.swap(still);
  }
  for (const pollfd& p : pending) ::close(p.fd);
  return connected;
}

// True while the server has not closed `fd` (nothing to read yet, no end of stream).
bool StillOpen(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// Threads of this process now (/proc/self/task).
size_t ProcessThreads() {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// A connection that has been answered once and is kept alive: its descriptor, or -1.
int KeptAlive(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return -1;
  }
  std::string got;
  char buf[512];
  while (got.find("hello world\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return fd;
}

// 2000 idle connections are held open up to the read deadline (30 s here): 500 kept alive after
// a request (each holds a thread of the server) and 1500 that send nothing (they wait in the
// kernel: TCP_DEFER_ACCEPT). A request on a new connection meanwhile is answered at once, not
// after they have timed out, and none of them was refused or closed early. The threads that
// serve connections start as they come and end once idle: a server allowed 4096 does not start
// with 4096, and keeps none once the connections are gone.
TEST(HttpServer, TwoThousandIdleConnectionsDoNotDelayARequestAndTheirThreadsEnd) {
  ServerOptions o;
  o.read_timeout = std::chrono::seconds(30);
  o.threads = 4096;
  o.idle_thread_exit = std::chrono::milliseconds(500);
  const size_t before = ProcessThreads();
  auto server = StartTestServer(o);
  ASSERT_TRUE(server);
  EXPECT_LT(ProcessThreads(), before + 16) << "threads started before any connection";
  std::vector<int> idle;
  for (int i = 0; i < 500; ++i) {
    const int fd = KeptAlive(server->port());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_EQ(idle.size(), 500u) << "requests on kept-alive connections failed";
  EXPECT_GE(ProcessThreads(), before + 500) << "kept-alive connections without a thread each";
  for (int fd : ConnectMany(server->port(), 1500, std::chrono::seconds(20))) idle.push_back(fd);
  EXPECT_EQ(idle.size(), 2000u) << "connections refused or dropped";
  httplib::Client c("127.0.0.1", server->port());
  c.set_connection_timeout(20);
  c.set_read_timeout(20);
  const auto start = std::chrono::steady_clock::now();
  auto r = c.Get("/hello");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r) << "no answer within 20 s: " << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(took, std::chrono::seconds(20));
  size_t open = 0;
  for (int fd : idle) open += StillOpen(fd) ? 1 : 0;
  EXPECT_EQ(open, idle.size()) << "idle connections closed before their read deadline";
  for (int fd : idle) ::close(fd);
  c.stop();
  // Closed by the client, each connection ends; its thread ends 500 ms after.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ProcessThreads() > before + 16 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LT(ProcessThreads(), before + 16) << "the idle connections' threads did not end";
  server->Stop();
}

}  // namespace
}  // namespace mooncake::http

// The server as a client sees it, over 127.0.0.1: routes, 404 and 405, a handler that throws
// (500, the server goes on), a body over the limit (413), a port already in use (an error naming
// it), an idle connection closed at the read deadline, and Stop() while a client is connected.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

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

}  // namespace
}  // namespace mooncake::http

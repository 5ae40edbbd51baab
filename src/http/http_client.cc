#include "http/http_client.h"

#include <httplib.h>

namespace mooncake::http {

namespace {

Result<Response> Convert(const httplib::Result& res, const char* method, const std::string& host,
                         int port, const std::string& path) {
  if (!res) {
    return IoError(std::string("http: ") + method + " http://" + host + ":" + std::to_string(port) +
                   path + ": " + httplib::to_string(res.error()));
  }
  Response out;
  out.status = res->status;
  out.body = res->body;
  out.content_type = res->get_header_value("Content-Type");
  return out;
}

void SetTimeouts(httplib::Client& client, std::chrono::milliseconds timeout) {
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
}

}  // namespace

Result<Response> Post(const std::string& host, int port, const std::string& path,
                      const std::string& body, const std::string& content_type,
                      std::chrono::milliseconds timeout) {
  httplib::Client client(host, port);
  SetTimeouts(client, timeout);
  return Convert(client.Post(path, body, content_type), "POST", host, port, path);
}

Result<Response> Get(const std::string& host, int port, const std::string& path,
                     std::chrono::milliseconds timeout) {
  httplib::Client client(host, port);
  SetTimeouts(client, timeout);
  return Convert(client.Get(path), "GET", host, port, path);
}

}  // namespace mooncake::http

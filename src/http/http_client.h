#pragma once

// A one-shot HTTP/1.1 POST or GET for the job's own tools (`mooncake serve stop`), over
// cpp-httplib, with connect, read and write deadlines.

#include <chrono>
#include <string>

#include "common/status.h"
#include "http/http_server.h"

namespace mooncake::http {

// The response, whatever its status; IoError names host:port and why when none came.
Result<Response> Post(const std::string& host, int port, const std::string& path,
                      const std::string& body, const std::string& content_type,
                      std::chrono::milliseconds timeout);

Result<Response> Get(const std::string& host, int port, const std::string& path,
                     std::chrono::milliseconds timeout);

}  // namespace mooncake::http

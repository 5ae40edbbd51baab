// Is anything listening at host:port? A plain TCP connect, for attaching processes: a refused
// connection (a store job that has stopped) is then a clear error at once, not a wait.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake {

// OK when a TCP connection to host:port (IPv4) opens within `timeout`; PeerFailure naming the
// reason (refused, unreachable) when it cannot; Timeout when no answer came; InvalidArgument
// when `host` does not resolve.
Status ProbeTcpListener(const std::string& host, uint16_t port, Nanos timeout);

}  // namespace mooncake

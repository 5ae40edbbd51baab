// Is anything listening at host:port? A plain TCP connect, for attaching processes: a refused
// connection (a store job that has stopped) is then a clear error at once, not a wait.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake {

// OK when a TCP connection to host:port (IPv4) opens within `timeout`; PeerFailure naming the
// reason (refused, unreachable) when it cannot; Timeout when no answer came; InvalidArgument
// when `host` does not resolve.
Status ProbeTcpListener(const std::string& host, uint16_t port, Nanos timeout);

// The IPv4 address of `host` (a name or dotted quad) with `port`; InvalidArgument naming the host
// and the resolver's reason when it does not resolve.
Result<sockaddr_in> ResolveIpv4(const std::string& host, uint16_t port);

}  // namespace mooncake

// The IPv4 addresses of this host, for a listener's connection file (docs/CLIENT.md).
#pragma once

#include <string>
#include <vector>

namespace mooncake {

// Addresses of the interfaces that are up: the others first, loopback (127.x) last, so a
// process on another host tries a reachable address before its own loopback.
std::vector<std::string> HostIpv4Addresses();

// The addresses a listener bound to `bind_address` is reached at: every host address for
// 0.0.0.0, else that address alone.
std::vector<std::string> ListenerAddresses(const std::string& bind_address);

}  // namespace mooncake

// The IPv4 addresses of this host, for a listener's connection file (docs/CLIENT.md).
#pragma once

#include <string>
#include <vector>

namespace mooncake {

// One IPv4 address of an interface that is up, with the interface's name ("eth0", "lo").
struct InterfaceAddress {
  std::string interface;
  std::string address;
  bool loopback = false;
};
std::vector<InterfaceAddress> HostInterfaceAddresses();

// Addresses of the interfaces that are up: the others first, loopback (127.x) last, so a
// process on another host tries a reachable address before its own loopback.
std::vector<std::string> HostIpv4Addresses();

// The addresses a listener bound to `bind_address` is reached at: every host address for
// 0.0.0.0, else that address alone. `net_devices` is the device list UCX was limited to
// (UCX_NET_DEVICES: "lo", "eth0,mlx5_0:1", "^eth1" for all but eth1; empty for every device):
// a connection that arrives through an interface UCX may not use is refused by UCX, so for
// 0.0.0.0 only the addresses of the interfaces it names are listed. When it names no
// interface of this host (RDMA devices only), every address is listed.
std::vector<std::string> ListenerAddresses(const std::string& bind_address,
                                           const std::string& net_devices = "");

}  // namespace mooncake

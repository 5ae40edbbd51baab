// The TCP connections a UCX listener accepted, seen from outside UCX (ucx_attach.cc): UCX 1.13
// accepts a connection and holds its socket until 16 bytes or more of a connection request
// have arrived, with no deadline, so a peer that connects and stays silent (or announces more
// bytes than it sends) holds a file descriptor of the listening rank for as long as it likes.
// The listener finds those sockets here and shuts them down; UCX then sees the connection end
// and closes the socket itself (the descriptor is never closed under UCX).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mooncake::transport {

struct AcceptedSocket {
  int fd = -1;
  std::string peer;  // "a.b.c.d:port" of the remote end
};

// Every connected IPv4 TCP socket of this process whose local port is `port` (the listening
// socket itself excluded). Reads /proc/self/fd; an fd that closes meanwhile is skipped.
std::vector<AcceptedSocket> SocketsAcceptedOn(uint16_t port);

// The attaching side: every connected IPv4 TCP socket of this process whose remote end is
// `peer` ("a.b.c.d:port"): the connection UCX's connection manager holds to a listener.
std::vector<AcceptedSocket> SocketsConnectedTo(const std::string& peer);

// "a.b.c.d:port" of an IPv4 socket address (what SocketsAcceptedOn reports as `peer`).
std::string Ipv4PeerName(const void* sockaddr_in_ptr);

}  // namespace mooncake::transport

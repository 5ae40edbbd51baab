#include "common/tcp_probe.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mooncake {

Result<sockaddr_in> ResolveIpv4(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return InvalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  sockaddr_in sa{};
  std::memcpy(&sa, found->ai_addr, sizeof sa);
  freeaddrinfo(found);
  sa.sin_port = htons(port);
  return sa;
}

Status ProbeTcpListener(const std::string& host, uint16_t port, Nanos timeout) {
  const std::string where = host + ":" + std::to_string(port);
  auto resolved = ResolveIpv4(host, port);
  if (!resolved.ok()) return resolved.status();
  const sockaddr_in sa = *resolved;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("socket: " + std::string(std::strerror(errno)));
  int err = connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    const int ms = static_cast<int>(std::max<int64_t>(1, timeout.count() / 1'000'000));
    socklen_t len = sizeof err;
    if (poll(&pfd, 1, ms) == 0) {
      err = ETIMEDOUT;
    } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
  }
  close(fd);
  if (err == 0) return Status::Ok();
  if (err == ETIMEDOUT) {
    return Timeout("no answer from " + where + " within " +
                   std::to_string(timeout.count() / 1'000'000) + " ms");
  }
  return PeerFailure("nothing listens at " + where + " (" + std::strerror(err) + ")");
}

}  // namespace mooncake

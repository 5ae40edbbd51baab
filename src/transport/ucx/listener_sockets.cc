#include "transport/ucx/listener_sockets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace mooncake::transport {

std::string Ipv4PeerName(const void* sockaddr_in_ptr) {
  const auto* sa = static_cast<const sockaddr_in*>(sockaddr_in_ptr);
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &sa->sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(sa->sin_port));
}

namespace {

// Every connected (not listening) IPv4 socket of this process for which `keep(local)` holds.
template <typename Keep>
std::vector<AcceptedSocket> ConnectedSockets(Keep&& keep) {
  std::vector<AcceptedSocket> out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  const int dir_fd = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dir_fd) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_in local{};
    socklen_t len = sizeof local;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
        local.sin_family != AF_INET || !keep(local)) {
      continue;
    }
    int listening = 0;
    socklen_t optlen = sizeof listening;
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0 ||
        listening != 0) {
      continue;
    }
    sockaddr_in peer{};
    len = sizeof peer;
    if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    out.push_back({static_cast<int>(fd), Ipv4PeerName(&peer)});
  }
  closedir(dir);
  return out;
}

}  // namespace

std::vector<AcceptedSocket> SocketsAcceptedOn(uint16_t port) {
  return ConnectedSockets(
      [port](const sockaddr_in& local) { return ntohs(local.sin_port) == port; });
}

std::vector<AcceptedSocket> SocketsConnectedTo(const std::string& peer) {
  std::vector<AcceptedSocket> out;
  for (AcceptedSocket& s : ConnectedSockets([](const sockaddr_in&) { return true; })) {
    if (s.peer == peer) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mooncake::transport

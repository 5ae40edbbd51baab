#include "cluster/liveness_link.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cluster/rendezvous_frames.h"
#include "common/log.h"
#include "common/secret.h"
#include "common/tcp_probe.h"

namespace mooncake::cluster {
namespace {

constexpr uint32_t kHelloMagic = 0x4d434c56;  // "MCLV"
constexpr int kPollMs = 100;                  // how soon Stop is seen
constexpr int kHelloMs = 1000;

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// magic, rank (both little-endian as this host writes them: the two ends run the same binary),
// then the token's bytes.
std::vector<std::byte> EncodeHello(Rank self, const std::vector<std::byte>& token) {
  std::vector<std::byte> out(8 + token.size());
  std::memcpy(out.data(), &kHelloMagic, 4);
  std::memcpy(out.data() + 4, &self.value, 4);
  std::copy(token.begin(), token.end(), out.begin() + 8);
  return out;
}

// A nonblocking connection to host:port within `timeout`, or the reason it failed.
Result<int> ConnectTo(const std::string& host, uint16_t port, Nanos timeout) {
  auto sa = ResolveIpv4(host, port);
  if (!sa.ok()) return sa.status();
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(Errno("socket"));
  int err = connect(fd, reinterpret_cast<const sockaddr*>(&*sa), sizeof *sa) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    const int ms = static_cast<int>(std::max<int64_t>(1, timeout.count() / 1'000'000));
    socklen_t len = sizeof err;
    if (poll(&pfd, 1, ms) <= 0) {
      err = ETIMEDOUT;
    } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
  }
  if (err != 0) {
    close(fd);
    return PeerFailure(std::strerror(err));
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<LivenessWatch>> LivenessWatch::Listen(const std::string& bind_address,
                                                             Rank watched,
                                                             std::vector<std::byte> token) {
  auto sa = ResolveIpv4(bind_address, 0);
  if (!sa.ok()) return sa.status().WithContext("the liveness listener");
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(Errno("the liveness listener's socket"));
  sockaddr_in bound = *sa;
  socklen_t len = sizeof bound;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*sa), sizeof *sa) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const Status s = IoError(Errno(("the liveness listener on " + bind_address).c_str()));
    close(fd);
    return s;
  }
  return std::unique_ptr<LivenessWatch>(
      new LivenessWatch(fd, ntohs(bound.sin_port), watched, std::move(token)));
}

LivenessWatch::LivenessWatch(int listen_fd, uint16_t port, Rank watched,
                             std::vector<std::byte> token)
    : listen_fd_(listen_fd), port_(port), watched_(watched), token_(std::move(token)) {}

LivenessWatch::~LivenessWatch() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void LivenessWatch::Start(DeathHandler on_death) {
  on_death_ = std::move(on_death);
  thread_ = std::thread([this] { Loop(); });
}

void LivenessWatch::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

bool LivenessWatch::Hello(int fd) {
  std::vector<std::byte> got(8 + token_.size());
  size_t have = 0;
  SteadyClock clock;
  const Nanos deadline = clock.Now() + std::chrono::milliseconds(kHelloMs);
  while (have < got.size() && !stopping_) {
    const Nanos left = deadline - clock.Now();
    if (left <= Nanos(0)) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int ms = static_cast<int>(std::max<int64_t>(1, left.count() / 1'000'000));
    if (poll(&pfd, 1, std::min(ms, kPollMs)) <= 0) continue;
    const ssize_t n = recv(fd, got.data() + have, got.size() - have, 0);
    if (n <= 0) return false;
    have += static_cast<size_t>(n);
  }
  if (have < got.size()) return false;
  uint32_t magic = 0;
  int32_t rank = -1;
  std::memcpy(&magic, got.data(), 4);
  std::memcpy(&rank, got.data() + 4, 4);
  const std::span<const std::byte> presented(got.data() + 8, token_.size());
  return magic == kHelloMagic && rank == watched_.value && SecretEquals(presented, token_);
}

std::string LivenessWatch::AwaitEnd(int fd) {
  std::byte sink[256];
  while (!stopping_) {
    pollfd pfd{fd, POLLIN | POLLRDHUP, 0};
    if (poll(&pfd, 1, kPollMs) <= 0) continue;
    const ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n > 0) continue;  // nothing is sent after the hello; ignored
    if (n == 0) return "its liveness connection was closed (the process ended)";
    if (errno == EAGAIN || errno == EINTR) continue;
    if (errno == ECONNRESET) return "its liveness connection was reset (the process ended)";
    // Anything else says nothing certain about the process: heartbeats decide.
    log::Warn("the liveness connection of rank {}: {}; its death is left to heartbeats",
              watched_.value, std::strerror(errno));
    return "";
  }
  return "";
}

void LivenessWatch::Loop() {
  while (!stopping_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, kPollMs) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (!Hello(fd)) {
      log::Warn("a connection to the liveness port {} without rank {}'s hello was dropped", port_,
                watched_.value);
      close(fd);
      continue;
    }
    linked_ = true;
    log::Debug("rank {} linked to the liveness port {}", watched_.value, port_);
    const std::string why = AwaitEnd(fd);
    close(fd);
    if (!why.empty() && on_death_) on_death_(watched_, why);
    return;  // one link per watch: its end is the evidence, whatever it was
  }
}

Result<std::unique_ptr<LivenessLink>> LivenessLink::Connect(const std::vector<std::string>& hosts,
                                                            uint16_t port, Rank self,
                                                            const std::vector<std::byte>& token,
                                                            Nanos timeout) {
  std::string tried;
  for (const std::string& host : hosts) {
    const std::string where = host + ":" + std::to_string(port);
    auto fd = ConnectTo(host, port, timeout);
    const rendezvous::Deadline hello_by =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kHelloMs);
    if (fd.ok() && rendezvous::SendAll(*fd, EncodeHello(self, token), hello_by).ok()) {
      return std::unique_ptr<LivenessLink>(new LivenessLink(*fd, where));
    }
    if (fd.ok()) close(*fd);
    tried += (tried.empty() ? "" : ", ") + where + " (" +
             (fd.ok() ? std::string("hello not sent") : fd.status().message()) + ")";
  }
  return PeerFailure("no liveness listener took the connection: " +
                     (tried.empty() ? std::string("no address") : tried));
}

LivenessLink::~LivenessLink() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace mooncake::cluster

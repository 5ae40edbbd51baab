#include "cluster/rendezvous_frames.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/tcp_probe.h"
#include "common/wire.h"

namespace mooncake::cluster::rendezvous {
namespace {

int MillisUntil(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1000));
}

Status SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return IoError(fmt::format("rendezvous: fcntl: {}", std::strerror(errno)));
  }
  const int one = 1;  // frames are small and every step waits on them: no Nagle delay
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return Status::Ok();
}

Result<sockaddr_in> Resolve(const std::string& host, uint16_t port) {
  auto addr = ResolveIpv4(host, port);
  if (!addr.ok()) return addr.status().WithContext("rendezvous");
  return addr;
}

bool KnownKind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(FrameKind::kHello) &&
         kind <= static_cast<uint8_t>(FrameKind::kAbort);
}

}  // namespace

std::vector<std::byte> EncodeFrame(const Frame& frame) {
  WireWriter w;
  w.Reserve(kHeaderBytes + frame.payload.size());
  w.Put<uint32_t>(kMagic);
  w.Put<uint8_t>(static_cast<uint8_t>(frame.kind));
  w.Put<uint32_t>(frame.step);
  w.Put<int32_t>(frame.rank);
  w.Put<uint64_t>(frame.payload.size());
  auto bytes = w.Take();
  bytes.insert(bytes.end(), frame.payload.begin(), frame.payload.end());
  return bytes;
}

std::optional<Frame> TakeFrame(std::vector<std::byte>* buffer, Status* error) {
  *error = Status::Ok();
  if (buffer->size() < kHeaderBytes) return std::nullopt;
  WireReader r(std::span(buffer->data(), kHeaderBytes));
  uint32_t magic = 0;
  uint8_t kind = 0;
  Frame frame;
  uint64_t length = 0;
  r.Get(&magic);
  r.Get(&kind);
  r.Get(&frame.step);
  r.Get(&frame.rank);
  r.Get(&length);
  if (magic != kMagic) {
    *error = ProtocolError(fmt::format("rendezvous: not a frame (magic {:#x})", magic));
    return std::nullopt;
  }
  if (!KnownKind(kind) || length > kMaxPayload) {
    *error = ProtocolError(fmt::format(
        "rendezvous: frame of kind {} announces {} bytes (at most {})", kind, length, kMaxPayload));
    return std::nullopt;
  }
  if (buffer->size() - kHeaderBytes < length) return std::nullopt;
  frame.kind = static_cast<FrameKind>(kind);
  const auto begin = buffer->begin() + kHeaderBytes;
  frame.payload.assign(begin, begin + static_cast<ptrdiff_t>(length));
  buffer->erase(buffer->begin(), begin + static_cast<ptrdiff_t>(length));
  return frame;
}

std::vector<std::byte> EncodeRecords(const std::vector<std::vector<std::byte>>& records) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(records.size()));
  for (const auto& r : records) w.PutBytes(r);
  return w.Take();
}

Result<std::vector<std::vector<std::byte>>> DecodeRecords(std::span<const std::byte> payload) {
  WireReader r(payload);
  uint32_t count = 0;
  // Each record costs at least its 4-byte length, so a count beyond that is forged.
  if (!r.Get(&count) || count > r.remaining() / 4) {
    return ProtocolError("rendezvous: malformed record set (count)");
  }
  std::vector<std::vector<std::byte>> records(count);
  for (auto& rec : records) {
    std::span<const std::byte> bytes;
    if (!r.GetBytes(&bytes)) return ProtocolError("rendezvous: malformed record set (record)");
    rec.assign(bytes.begin(), bytes.end());
  }
  if (!r.done()) return ProtocolError("rendezvous: malformed record set (trailing bytes)");
  return records;
}

Result<int> ListenTcp(const std::string& address, uint16_t port, uint16_t* bound) {
  auto addr = Resolve(address, port);
  if (!addr.ok()) return addr.status();
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(fmt::format("rendezvous: socket: {}", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    close(fd);
    return IoError(
        fmt::format("rendezvous: cannot listen on {}:{}: {}", address, port, std::strerror(err)));
  }
  sockaddr_in got{};
  socklen_t len = sizeof(got);
  getsockname(fd, reinterpret_cast<sockaddr*>(&got), &len);
  *bound = ntohs(got.sin_port);
  if (auto s = SetNonBlocking(fd); !s.ok()) {
    close(fd);
    return s;
  }
  return fd;
}

Result<int> ConnectTcp(const std::string& host, uint16_t port, Deadline deadline) {
  auto addr = Resolve(host, port);
  if (!addr.ok()) return addr.status();
  std::string last = "no attempt";
  do {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return IoError(fmt::format("rendezvous: socket: {}", std::strerror(errno)));
    if (connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0) {
      if (auto s = SetNonBlocking(fd); !s.ok()) {
        close(fd);
        return s;
      }
      return fd;
    }
    last = std::strerror(errno);
    close(fd);
    // Refused: the root is not listening yet (ranks start in any order); try again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return Timeout(fmt::format("rendezvous: could not connect to {}:{} before the deadline ({})",
                             host, port, last));
}

Status SendAll(int fd, std::span<const std::byte> bytes, Deadline deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return PeerFailure(fmt::format("rendezvous: send: {}", std::strerror(errno)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Timeout("rendezvous: the peer did not take a frame before the deadline");
    }
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, MillisUntil(deadline));
  }
  return Status::Ok();
}

Status ReadAvailable(int fd, std::vector<std::byte>* buffer) {
  std::byte chunk[64 * 1024];
  for (;;) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer->insert(buffer->end(), chunk, chunk + n);
      continue;
    }
    if (n == 0) return PeerFailure("rendezvous: the peer closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
    return PeerFailure(fmt::format("rendezvous: recv: {}", std::strerror(errno)));
  }
}

Result<Frame> ReadFrame(int fd, std::vector<std::byte>* buffer, Deadline deadline) {
  for (;;) {
    Status error;
    if (auto frame = TakeFrame(buffer, &error)) return std::move(*frame);
    if (!error.ok()) return error;
    if (std::chrono::steady_clock::now() >= deadline) {
      return Timeout("rendezvous: no frame before the deadline");
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, MillisUntil(deadline));
    if (auto s = ReadAvailable(fd, buffer); !s.ok()) {
      // The peer may have sent a last frame and closed: use what arrived first.
      if (auto frame = TakeFrame(buffer, &error)) return std::move(*frame);
      return s;
    }
  }
}

}  // namespace mooncake::cluster::rendezvous

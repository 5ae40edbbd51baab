// Evidence that a process died, within milliseconds and never for a process that is only slow: a
// TCP connection that the watched process holds open for its whole life. The kernel closes it
// when the process ends, however it ends (SIGKILL included), so the watcher reads end of file (or
// a reset) at once; a stopped (SIGSTOP) or overloaded process keeps it open, so it is left to the
// heartbeats' failure timeout, as is a lost host or a cut network (no FIN ever comes; no TCP
// keepalive is asked for, as that would call a partition a death).
//
// Why not UCX's own endpoint errors (docs/FAULTS.md, "A standby conductor"): UCX 1.13's
// shared-memory transports refuse UCP_ERR_HANDLING_MODE_PEER (a dead shm peer is reported by
// nothing), and in the peer mode UCX's keepalive fails the endpoint of a peer that stopped
// answering, which a stopped process also does.
//
// The store service's standby conductor watches (LivenessWatch: it listens); the active conductor
// connects once (LivenessLink) and first says who it is, the job token and its rank, so a process
// that only knows the port cannot fake a death by connecting and closing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"

namespace mooncake::cluster {

class LivenessWatch {
 public:
  // Runs once, on the watch's thread, when the linked process's connection ended: `why` says how
  // (end of file, reset). It must not block for long.
  using DeathHandler = std::function<void(Rank watched, const std::string& why)>;

  // Listens on `bind_address` (IPv4, "0.0.0.0" for every interface), a port the kernel picks, for
  // the connection of `watched` presenting `token`. InvalidArgument naming the address when it
  // does not resolve; IoError when the socket cannot be had.
  static Result<std::unique_ptr<LivenessWatch>> Listen(const std::string& bind_address,
                                                       Rank watched, std::vector<std::byte> token);
  ~LivenessWatch();
  LivenessWatch(const LivenessWatch&) = delete;
  LivenessWatch& operator=(const LivenessWatch&) = delete;

  uint16_t port() const { return port_; }
  // Starts the thread that accepts the link (a connection without the right hello within 1 s is
  // dropped) and then waits for its end.
  void Start(DeathHandler on_death);
  // Joins the thread; no handler runs after it returns. Idempotent.
  void Stop();
  // True once the watched process linked (its hello was right).
  bool linked() const { return linked_.load(); }

 private:
  LivenessWatch(int listen_fd, uint16_t port, Rank watched, std::vector<std::byte> token);
  void Loop();
  // Reads the hello of `fd` within 1 s; true when it names `watched_` with the token.
  bool Hello(int fd);
  // Waits for the link's end (or Stop): the reason, or empty after Stop / an unexpected error.
  std::string AwaitEnd(int fd);

  int listen_fd_;
  uint16_t port_;
  Rank watched_;
  std::vector<std::byte> token_;
  DeathHandler on_death_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> linked_{false};
  std::thread thread_;
};

// The watched side: an open connection to a LivenessWatch, held for as long as this object (the
// process's life: close it only when the process ends on purpose).
class LivenessLink {
 public:
  // Connects to the first of `hosts` that answers at `port` within `timeout` each and says who
  // this is (`self`, `token`). PeerFailure naming every address tried when none took it.
  static Result<std::unique_ptr<LivenessLink>> Connect(const std::vector<std::string>& hosts,
                                                       uint16_t port, Rank self,
                                                       const std::vector<std::byte>& token,
                                                       Nanos timeout);
  ~LivenessLink();
  LivenessLink(const LivenessLink&) = delete;
  LivenessLink& operator=(const LivenessLink&) = delete;
  const std::string& peer() const { return peer_; }

 private:
  LivenessLink(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  int fd_;
  std::string peer_;  // host:port
};

}  // namespace mooncake::cluster

// The bootstrap without a launcher's collectives: ranks meet at the root's TCP address and
// present the job's credential, as NCCL's and PyTorch's rendezvous do. For ranks that no MPI
// started together (a process started by hand or by a launcher without PMI, a unit test's
// threads), with MpiSession's contract: named steps, each with a deadline; on a timeout the root
// names the ranks that never arrived.
//
// Rank 0 is the root: it listens, admits ranks whose hello carries the credential, the job's
// size and a rank of the job not yet taken, collects each step's contributions and answers.
// The other ranks connect to it (retrying until their connect deadline, as ranks start in any
// order). Why not the UCX listener that attached clients use: UCX numbers an attached process
// after the job's ranks, while a bootstrap's rank must keep the number it was started with, and
// the transport is connected only after the bootstrap's exchange, so the rendezvous needs its
// own socket. Every frame is bounds-checked (rendezvous_frames.h); a peer that sends anything
// before an accepted hello is cut off.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"

namespace mooncake::cluster {

struct RendezvousConfig {
  int rank = 0;
  int size = 1;
  std::string hostname;    // this rank's host name in the records; empty: gethostname()
  std::string root_host;   // where rank 0 listens (the other ranks connect there)
  uint16_t root_port = 0;  // rank 0: 0 lets the kernel choose (see RendezvousBootstrap::port)
  std::string bind_address = "0.0.0.0";  // rank 0 only: the address it listens on
  std::vector<std::byte> credential;     // the job's secret; a hello without it is refused
  Nanos connect_timeout = std::chrono::seconds(60);
};

class RendezvousState;

class RendezvousBootstrap final : public Bootstrap {
 public:
  // Rank 0 listens; every other rank connects to the root and sends its hello (refused or not,
  // it hears at its first step that waits for an answer).
  static Result<std::unique_ptr<RendezvousBootstrap>> Create(const RendezvousConfig& config);
  ~RendezvousBootstrap() override;

  int rank() const override { return config_.rank; }
  int size() const override { return config_.size; }
  const std::string& hostname() const override { return config_.hostname; }
  // The port rank 0 listens on (0 on other ranks).
  uint16_t port() const { return port_; }

  const std::vector<int>& missing_at_last_step() const override;

  // Tells the root (on rank 0: every rank) to end the job with `code`, then ends this process.
  [[noreturn]] void Abort(int code) const override;
  // Closes the sockets; from then on Abort ends only this rank.
  void Leave() const override;

 private:
  // `fd`: rank 0's listening socket, or another rank's connection to rank 0.
  RendezvousBootstrap(RendezvousConfig config, int fd, uint16_t port);

  Result<Records> DoAllGather(std::span<const std::byte> mine, std::string_view step,
                              Nanos timeout) const override;
  Result<Records> DoGather(std::span<const std::byte> mine, int root, std::string_view step,
                           Nanos timeout) const override;
  Status DoBarrier(Nanos timeout, std::string_view step) const override;

  RendezvousConfig config_;
  std::unique_ptr<RendezvousState> state_;
  uint16_t port_;
};

}  // namespace mooncake::cluster

// `mooncake p2p`: distribute a file or a folder from the source rank(s) to every other rank
// (docs/P2P.md). This is the command's logic on one rank, after the job is formed; src/app
// parses the options, starts MPI, bootstraps the transport and calls it (no MPI here).
//
// Roles: the source ranks register PATH (mapped files, or one buffer with --in-memory). Every
// other rank receives: with --in-memory into its own buffer; into DIR/rank<r> with --copies
// rank; with --copies node (the default for files) the ranks of one host share one copy in
// DIR: the lowest of them fetches, the others check every piece of it once it is done (and
// take the fetch over, keeping its good pieces, when that rank dies). Every rank reports to
// the tracker on the conducting rank (CommandConfig::tracker_rank), which prints the table and
// decides the exit status:
//   0 every receiving rank holds every byte, verified; 1 one failed (or a byte differs);
//   3 a rank died, and every surviving receiver holds every byte; 4 this rank lost the tracker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "p2p/heartbeat.h"
#include "p2p/p2p_node.h"
#include "p2p/tracker.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::p2p {

enum class Copies { kNode, kRank };

struct CommandConfig {
  std::string source;  // PATH as given
  std::string dest;    // DIR (unused with in_memory)
  std::string name;    // object name (default: PATH's last component)
  bool in_memory = false;
  Copies copies = Copies::kNode;
  std::vector<int32_t> source_ranks{0};
  // The rank that conducts: it serves the tracker, prints the table and decides the exit status.
  int32_t tracker_rank = 0;
  P2pConfig p2p;
  Nanos heartbeat_interval = Nanos(100'000'000);
  Nanos peer_timeout = Nanos(3'000'000'000);
  Nanos rpc_timeout = Nanos(5'000'000'000);
  Nanos progress_interval = Nanos(5'000'000'000);
  // Test hooks (fault.*): rank kill_rank SIGKILLs itself after verifying kill_after pieces;
  // rank corrupt_rank (a source) serves every piece with one byte flipped.
  int32_t kill_rank = -1;
  uint64_t kill_after = 0;
  int32_t corrupt_rank = -1;
  std::string csv;  // the tracker's rank writes the per-rank table here ("" : nowhere)
};

// Exit statuses of the command (besides 0 and 2 for usage errors, which src/app reports).
inline constexpr int kExitFailed = 1;
inline constexpr int kExitRankLost = 3;
inline constexpr int kExitTrackerLost = 4;

class P2pCommand {
 public:
  // Call before the bootstrap lets peers talk: the tracker's rank starts serving it on `rpc`.
  P2pCommand(CommandConfig config, transport::Transport& transport, transport::Rpc& rpc);
  ~P2pCommand();

  // Runs this rank's part; `hosts[r]` is rank r's host name. Returns the exit status (the
  // tracker's rank's is the job's).
  int Run(const std::vector<std::string>& hosts);
  // After the transport was closed (which released every registration): the command's copies
  // are unmapped when it is destroyed, without touching the transport again.
  void TransportClosed();
  // A rank was declared dead during the run (known once Run returned).
  bool peers_lost() const { return peers_lost_; }

 private:
  struct Plan;
  RankReport RunSource();
  RankReport RunReceiver(const Plan& plan, Heartbeat& heartbeat);
  RankReport Share(const Plan& plan, Heartbeat& heartbeat, int32_t* fetcher);
  RankReport FetchInto(const Plan& plan, const FetchTarget& target, Heartbeat& heartbeat);
  int Finish(const RankReport& mine, Heartbeat& heartbeat, const std::vector<std::string>& hosts);

  CommandConfig config_;
  transport::Transport& transport_;
  const std::string name_;  // the object's name
  SteadyClock clock_;
  std::unique_ptr<Tracker> tracker_;  // the tracker's rank only
  std::unique_ptr<TrackerClient> client_;
  std::unique_ptr<P2pNode> node_;
  bool peers_lost_ = false;
};

}  // namespace mooncake::p2p

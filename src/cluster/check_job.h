// The bring-up check (job.mode = check): proves every plane works end to end.
//  1. every rank pings every other rank over the RPC (RTT min/median/max);
//  2. each prefill rank writes a block into a store rank's registered DRAM (one-sided WRITE);
//  3. each decode rank reads a block back (one-sided READ) and verifies its bytes;
//  4. the conductor tells every rank to stop, gathers the results and writes summary.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"
#include "cluster/peer_exchange.h"
#include "cluster/role_table.h"
#include "common/clock.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::cluster {

struct CheckJobConfig {
  uint64_t block_size = 1ull << 20;  // job.block_size: the verified block
  Nanos rpc_timeout = Nanos(2'000'000'000);
  Nanos phase_timeout = Nanos(60'000'000'000);
  int ping_rounds = 20;
  int silent_rank = -1;  // test hook: this rank never answers pings
  std::string out_dir;   // the run folder (empty: runs/<UTC timestamp>)
};

// This rank once the bootstrap is done; `local_buffer` holds at least block_size bytes on
// prefill and decode ranks and is registered with `transport`.
struct CheckJobRank {
  const Bootstrap& bootstrap;
  const RoleTable& roles;
  transport::Transport& transport;
  transport::Rpc& rpc;
  const std::vector<PeerInfo>& peers;  // index = rank
  std::byte* local_buffer = nullptr;
};

// Collective. Returns the process exit code (0 when every block verified and nothing hung).
int RunCheckJob(const CheckJobConfig& config, const CheckJobRank& rank);

}  // namespace mooncake::cluster

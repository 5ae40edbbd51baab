// The bootstrap exchange: every rank publishes its role, host, transport address and the remote
// descriptors of the memory it registered; every rank connects to all others and imports all
// descriptors. Rank 0's record also carries the job token it drew, which every rank's Rpc then
// requires. Runs over any Bootstrap (cluster/bootstrap.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"
#include "cluster/role.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::cluster {

// The bootstrap's deadline in tools that have no job.phase_timeout (its default).
constexpr Nanos kToolBootstrapTimeout = std::chrono::seconds(60);

struct PeerInfo {
  Role role = Role::kConductor;
  std::string host;
  std::vector<transport::RemoteDescriptor> regions;
  transport::JobToken token;  // the conductor's is the job's; the others send zeros
};

// Encoded form of one rank's record (bounds-checked decode; a malformed record names its rank).
std::vector<std::byte> EncodePeerRecord(const PeerInfo& info, std::span<const std::byte> address);
Result<PeerInfo> DecodePeerRecord(std::span<const std::byte> bytes,
                                  std::vector<std::byte>* address);

// Collective: every rank must call it. Returns all ranks' records (index = rank); `rpc` (if any:
// a tool without RPC passes nullptr) has the job token before any endpoint exists. The exchange
// fails with Timeout (naming, on rank 0, the ranks that never came) when it has not completed
// within `timeout`. The job's token is the one the conductor (the rank whose record has the
// conductor's role; rank 0 where none has) drew. With `address_file`, that rank writes every
// rank's worker address there (hex, one line per rank) for tools that attach to a running job.
Result<std::vector<PeerInfo>> ExchangePeers(const Bootstrap& bootstrap, transport::Transport& t,
                                            transport::Rpc* rpc, Role my_role,
                                            const std::vector<transport::MemoryRegion>& exported,
                                            Nanos timeout, const std::string& address_file = "");

}  // namespace mooncake::cluster

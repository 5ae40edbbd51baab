// The store's directory: what a process outside the job needs to use the store (src/client,
// docs/CLIENT.md). It attaches to the master (transport.h "Attaching"), asks for the directory
// (StoreMsg::kDirectory), then attaches to every store rank at the addresses listed here and
// imports its segment, after which it calls the master and moves bytes exactly as a rank of
// the job does (store/net/client.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "store/net/topology.h"
#include "transport/transport.h"

namespace mooncake::store {

inline constexpr uint32_t kDirectoryVersion = 1;
inline constexpr uint32_t kMaxDirectoryRanks = 65536;
inline constexpr uint32_t kMaxHostsPerRank = 64;

struct StoreRankEntry {
  Rank rank;
  std::vector<std::string> hosts;  // IPv4 addresses it listens on, best first
  uint16_t port = 0;               // its listener
  std::vector<std::byte> segment;  // its DRAM segment's transport::RemoteDescriptor, encoded
  MC_WIRE_FIELDS(rank, hosts, port, segment)
};

struct StoreDirectory : WireMessage<StoreDirectory> {
  uint32_t version = kDirectoryVersion;
  int32_t world_size = 0;
  Rank master;
  uint32_t default_replicas = 1;  // store.replicas of the job: what a put gets by default
  bool ssd = false;               // the store ranks spill to an SSD tier
  std::vector<StoreRankEntry> store_ranks;
  MC_WIRE_MESSAGE(StoreDirectory, version, world_size, master, default_replicas, ssd, store_ranks)
  // Ranks inside the job or its join slots, distinct and not the master; descriptors that
  // decode; sane counts.
  Status Validate() const;

  // The segments, for StoreClient (each entry's descriptor decoded).
  Result<StoreTopology> Topology() const;
};

}  // namespace mooncake::store

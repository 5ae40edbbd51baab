// StoreTopology: where each store rank's DRAM segment lives, as published at bootstrap. The
// master registers one segment per entry (AddSegment(rank, length)); clients turn a replica's
// (rank, offset) into the remote address of a one-sided READ or WRITE.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "store/types.h"
#include "transport/transport.h"

namespace mooncake::store {

struct StoreSegment {
  Rank rank;
  uint64_t base = 0;    // remote address of the segment's first byte (in the store rank's space)
  uint64_t length = 0;  // bytes
};

struct StoreTopology {
  std::vector<StoreSegment> segments;  // one per store rank, ascending rank

  // From bootstrap records: `regions[r]` are rank r's exported regions
  // (cluster::PeerInfo::regions); each rank in `store_ranks` contributes its region number
  // `region_index` as its segment. InvalidArgument when a store rank exported no such region.
  static Result<StoreTopology> FromRegions(
      const std::vector<int>& store_ranks,
      const std::vector<std::vector<transport::RemoteDescriptor>>& regions,
      size_t region_index = 0);

  const StoreSegment* Find(Rank rank) const;
  // Remote address of `loc` (tier DRAM) after checking that [offset, +length) lies inside the
  // rank's segment: a wrong answer from the master can never make a client touch other memory.
  Result<uint64_t> RemoteAddress(const ReplicaLocation& loc) const;
};

}  // namespace mooncake::store

#include "store/net/topology.h"

#include <string>

namespace mooncake::store {

Result<StoreTopology> StoreTopology::FromRegions(
    const std::vector<int>& store_ranks,
    const std::vector<std::vector<transport::RemoteDescriptor>>& regions, size_t region_index) {
  StoreTopology t;
  for (int r : store_ranks) {
    if (r < 0 || static_cast<size_t>(r) >= regions.size() || regions[r].size() <= region_index) {
      return InvalidArgument("store rank " + std::to_string(r) + " exported no region #" +
                             std::to_string(region_index) + " (its DRAM segment)");
    }
    const auto& d = regions[r][region_index];
    t.segments.push_back(StoreSegment{Rank{r}, d.addr, d.length});
  }
  return t;
}

const StoreSegment* StoreTopology::Find(Rank rank) const {
  for (const auto& s : segments) {
    if (s.rank == rank) return &s;
  }
  return nullptr;
}

Result<uint64_t> StoreTopology::RemoteAddress(const ReplicaLocation& loc) const {
  if (loc.tier != Tier::kDram) {
    return NotSupported("replica on store rank " + std::to_string(loc.rank.value) +
                        " is not in DRAM");
  }
  const StoreSegment* s = Find(loc.rank);
  if (s == nullptr) {
    return InvalidArgument("rank " + std::to_string(loc.rank.value) + " has no store segment");
  }
  if (loc.offset > s->length || loc.length > s->length - loc.offset) {
    return ProtocolError("replica [" + std::to_string(loc.offset) + ", +" +
                         std::to_string(loc.length) + ") lies outside the segment of store rank " +
                         std::to_string(loc.rank.value));
  }
  return s->base + loc.offset;
}

}  // namespace mooncake::store

#include "store/net/directory.h"

#include <set>

#include "transport/join_slots.h"

namespace mooncake::store {
namespace {

Status Bad(const std::string& what) { return ProtocolError("malformed StoreDirectory: " + what); }

}  // namespace

Status StoreDirectory::Validate() const {
  if (version != kDirectoryVersion) {
    return ProtocolError("StoreDirectory version " + std::to_string(version) + ", expected " +
                         std::to_string(kDirectoryVersion) + " (client and job differ)");
  }
  if (world_size < 2) return Bad("a job of " + std::to_string(world_size) + " ranks");
  if (master.value < 0 || master.value >= world_size) return Bad("master outside the job");
  if (store_ranks.empty() || store_ranks.size() > kMaxDirectoryRanks) {
    return Bad("no store ranks, or too many");
  }
  std::set<int32_t> seen;
  for (const auto& e : store_ranks) {
    // A store rank of the job, or one that joined it since (a join slot, transport/join_slots.h).
    if (e.rank.value < 0 || e.rank.value >= world_size + transport::kMaxJoinedRanks ||
        e.rank == master || !seen.insert(e.rank.value).second) {
      return Bad("store rank " + std::to_string(e.rank.value) + " is outside the job or repeated");
    }
    if (e.hosts.empty() || e.hosts.size() > kMaxHostsPerRank || e.port == 0) {
      return Bad("store rank " + std::to_string(e.rank.value) + " has no listener address");
    }
    auto d = transport::RemoteDescriptor::Decode(e.segment);
    if (!d.ok())
      return d.status().WithContext("segment of store rank " + std::to_string(e.rank.value));
  }
  return Status::Ok();
}

Result<StoreTopology> StoreDirectory::Topology() const {
  StoreTopology t;
  for (const auto& e : store_ranks) {
    auto d = transport::RemoteDescriptor::Decode(e.segment);
    if (!d.ok()) return d.status();
    t.segments.push_back(StoreSegment{e.rank, d->addr, d->length});
  }
  return t;
}

}  // namespace mooncake::store

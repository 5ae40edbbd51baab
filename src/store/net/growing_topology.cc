#include "store/net/growing_topology.h"

#include <algorithm>
#include <string>

namespace mooncake::store {

GrowingTopology::GrowingTopology(StoreTopology first) {
  snapshots_.push_back(std::make_unique<const StoreTopology>(std::move(first)));
  now_.store(snapshots_.back().get(), std::memory_order_release);
}

void GrowingTopology::SetResolver(Resolver resolver) {
  std::lock_guard<std::mutex> lock(mu_);
  resolver_ = std::move(resolver);
}

Status GrowingTopology::AddLocked(const StoreSegment& segment) {
  const StoreTopology& now = Now();
  if (now.Find(segment.rank) != nullptr) {
    return Status(ErrorCode::kAlreadyExists,
                  "store rank " + std::to_string(segment.rank.value) + " is known already");
  }
  auto next = std::make_unique<StoreTopology>(now);
  auto& segs = next->segments;
  auto at = std::lower_bound(segs.begin(), segs.end(), segment.rank,
                             [](const StoreSegment& s, Rank r) { return s.rank < r; });
  segs.insert(at, segment);  // ascending rank, as StoreTopology keeps them
  snapshots_.push_back(std::move(next));
  now_.store(snapshots_.back().get(), std::memory_order_release);
  return Status::Ok();
}

Status GrowingTopology::Add(const StoreSegment& segment) {
  std::lock_guard<std::mutex> lock(mu_);
  return AddLocked(segment);
}

Result<uint64_t> GrowingTopology::RemoteAddress(const ReplicaLocation& loc) {
  auto address = Now().RemoteAddress(loc);
  if (address.ok() || loc.tier != Tier::kDram || Now().Find(loc.rank) != nullptr) return address;
  std::lock_guard<std::mutex> lock(mu_);
  if (Now().Find(loc.rank) == nullptr) {  // another thread may have resolved it meanwhile
    if (!resolver_) return address;
    auto segment = resolver_(loc.rank);
    if (!segment.ok()) {
      return segment.status().WithContext("store rank " + std::to_string(loc.rank.value) +
                                          " (joined since this client attached)");
    }
    if (segment->rank != loc.rank) return Internal("the resolver answered another rank");
    MC_RETURN_IF_ERROR(AddLocked(*segment));
  }
  return Now().RemoteAddress(loc);
}

}  // namespace mooncake::store

// GrowingTopology: a StoreClient's view of the store ranks' segments, which grows while the
// client runs: store ranks join a running job (`mooncake store join`, issue 33 item 4), and the
// master then places replicas on a rank this client has never seen. A lookup that misses asks
// the resolver (the client attaches to the new rank and imports its segment) and tries again,
// so a client sees new capacity without reconnecting.
//
// Threading: any thread. Lookups that hit read the current snapshot without a lock; Add and the
// resolver run under one mutex (one new rank resolved at a time). Snapshots are kept until the
// object goes, so a reference from Now() stays valid for the object's life.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "store/net/topology.h"

namespace mooncake::store {

class GrowingTopology {
 public:
  // Finds and prepares the segment of a store rank not known yet (NotFound when there is none).
  using Resolver = std::function<Result<StoreSegment>(Rank rank)>;

  explicit GrowingTopology(StoreTopology first);
  GrowingTopology(const GrowingTopology&) = delete;
  GrowingTopology& operator=(const GrowingTopology&) = delete;

  const StoreTopology& Now() const { return *now_.load(std::memory_order_acquire); }
  // Unset: a miss stays a miss (the job's ranks are all there is).
  void SetResolver(Resolver resolver);
  // StoreTopology::RemoteAddress, resolving a DRAM replica's unknown rank once first.
  Result<uint64_t> RemoteAddress(const ReplicaLocation& loc);
  // Adds `segment` (AlreadyExists when its rank has one).
  Status Add(const StoreSegment& segment);

 private:
  Status AddLocked(const StoreSegment& segment);

  std::mutex mu_;
  std::vector<std::unique_ptr<const StoreTopology>> snapshots_;  // guarded, oldest first
  std::atomic<const StoreTopology*> now_;
  Resolver resolver_;  // guarded by mu_
};

}  // namespace mooncake::store

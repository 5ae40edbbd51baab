// Re-replication after a store rank died (DESIGN.md "Failure model"): on the conductor, copies
// every object left with fewer DRAM replicas than its put asked for from a surviving replica to
// another live store rank, one-sided: READ from the survivor into a registered staging buffer,
// check the object's XXH3 checksum, WRITE to the region the master reserved, then make it a
// replica (MetadataMaster::StartCopies / CompleteCopy). A copy whose bytes fail the checksum is
// dropped, never installed. Runs on its own thread, woken by Kick().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/clock.h"
#include "common/periodic_thread.h"
#include "common/status.h"
#include "store/net/master_service.h"
#include "store/net/topology.h"
#include "transport/transport.h"

namespace mooncake::store {

class Rereplicator {
 public:
  // `transport` and `master` must outlive it; it keeps a copy of `topology` (AddSegment grows
  // it). `staging_bytes`: copies of larger objects go through it in pieces.
  Rereplicator(transport::Transport& transport, MasterService& master,
               const StoreTopology& topology, Nanos timeout, size_t staging_bytes = 4 << 20);
  ~Rereplicator();
  Rereplicator(const Rereplicator&) = delete;
  Rereplicator& operator=(const Rereplicator&) = delete;

  // Registers the staging buffer and starts the thread.
  Status Start();
  // Copies until no object is under-replicated (or nothing more fits). Any thread.
  void Kick();
  // A store rank joined: copies may read from and write to its segment. Any thread.
  void AddSegment(const StoreSegment& segment);
  void Stop();
  uint64_t copied() const { return copied_.load(); }
  uint64_t failed() const { return failed_.load(); }

 private:
  // Works off the master's copy orders until none is left (or Stop); the thread's turn.
  bool CopyAll();
  // Gives up at `deadline` (steady clock), the master's CopyOrder::timeout after the order.
  Status Copy(const CopyOrder& order, Nanos deadline);
  Status Move(transport::OpKind op, Rank peer, uint64_t remote, size_t length, Nanos deadline);

  transport::Transport& transport_;
  MasterService& master_;
  std::mutex topology_mu_;
  StoreTopology topology_;  // guarded by topology_mu_
  Nanos timeout_;
  SteadyClock clock_;
  std::vector<std::byte> staging_;
  transport::MemoryRegion region_;
  bool registered_ = false;
  std::atomic<uint64_t> copied_{0}, failed_{0};
  PeriodicThread worker_;  // ticks only when kicked
};

}  // namespace mooncake::store

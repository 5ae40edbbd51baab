// SpillCoordinator: the conductor's side of the SSD tier. It is the master's EvictionSink: an
// evicted DRAM replica is queued (the master's lock is held, so nothing blocks there) and a sender
// thread asks the store rank holding it to write it to its HDF5 tier (kSpill, batched per rank);
// the answer CompleteSpill()s each block, recording the SSD replica and freeing the DRAM (or just
// freeing it when the tier refused: queue full, counted). Promotion orders go the same way
// (kPromote -> CompletePromote). kSsdDrop notices from store ranks become DropReplica. Removes
// of objects with SSD copies wait for kSsdTombstone on the ranks that hold them
// (MasterService::SetTombstoneWriter).
//
// Back-pressure: at most `max_pending_bytes` of evicted blocks wait per store rank (their DRAM
// stays reserved meanwhile); beyond it OnEvict declines (counted in `refused_at_conductor`). A
// spill that fails (the tier is full, the disk is full, a write error) makes OnEvict decline
// every block of that rank for `retry_after`, naming the failure (WhyDeclined). What a declined
// or failed block becomes is the master's policy (MasterConfig::when_full): dropped from DRAM
// as without a tier (kEvict), or kept there (kKeep).
//
// Threading: OnEvict/OnPromote run on the master's thread under its lock; the sender thread takes
// the master's lock (MasterService::WithMaster) only to complete.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "store/eviction_sink.h"
#include "store/net/master_service.h"
#include "store/net/ssd_messages.h"
#include "transport/rpc.h"

namespace mooncake::store {

struct SpillCoordinatorConfig {
  uint64_t max_pending_bytes = 64ull << 20;  // per store rank
  uint32_t batch = 256;                      // blocks per kSpill / kPromote call
  Nanos rpc_timeout = std::chrono::seconds(30);
  Nanos retry_after = std::chrono::seconds(1);  // after a failed spill, per store rank
};

struct SpillCoordinatorStats {
  uint64_t spills_sent = 0;
  uint64_t spilled = 0;  // SSD replica recorded
  // Blocks not spilled; the master dropped or kept each (MasterStats says which):
  uint64_t refused_at_conductor = 0;  // pending bound reached, or the rank's last spill failed
  uint64_t refused_by_tier = 0;       // the store rank's queue was full
  uint64_t spill_failures = 0;        // write error (tier or disk full, I/O) or RPC failure
  uint64_t promotions = 0;            // done
  uint64_t promotion_failures = 0;
  uint64_t dropped_by_tier_lru = 0;  // kSsdDrop notices applied
  uint64_t recovered = 0;            // AddReplica'd at start
  uint64_t recovery_rejected = 0;    // AddReplica refused (e.g. disagreeing duplicate)
  uint64_t tombstones = 0;           // written for removes
  uint64_t tombstone_failures = 0;   // the remove was answered with the error
};

class SpillCoordinator final : public EvictionSink {
 public:
  // `rpc` and `service` must outlive the coordinator. Start() attaches it to the master.
  SpillCoordinator(transport::Rpc& rpc, MasterService& service, SpillCoordinatorConfig cfg = {});
  ~SpillCoordinator() override;

  // Registers the kSsdDrop handler, attaches as the master's sink, starts the sender thread.
  void Start();
  // Detaches from the master, answers what is queued with "dropped" (frees DRAM), joins the
  // sender. Idempotent.
  void Stop();
  // Blocks reported by store rank `rank` after a restart: AddReplica for each (call before
  // admitting requests).
  void AddRecovered(Rank rank, const RecoveredBlocks& blocks);
  // Waits until nothing is queued or in flight (tests; bounded by `timeout`).
  bool WaitIdle(Nanos timeout);
  SpillCoordinatorStats Stats() const;

  // Test hook: called on the sender thread for each block whose SSD replica was recorded.
  std::function<void(const std::string& key)> on_spill_recorded;

  bool OnEvict(const EvictedReplica& replica) override;
  bool OnPromote(const PromotionOrder& order) override;
  std::string WhyDeclined(Rank rank) const override;

 private:
  struct Job {
    bool promote = false;
    EvictedReplica spill;
    PromotionOrder order;
  };
  void SenderLoop();
  void SendSpills(Rank rank, std::vector<EvictedReplica> batch);
  void SendPromotions(Rank rank, std::vector<PromotionOrder> batch);
  void OnDrop(Rank from, std::span<const std::byte> request);
  // Any thread (a remove on the master's dispatcher): kSsdTombstone per rank, synchronously.
  std::vector<Status> WriteTombstones(const std::vector<TombstoneOrder>& orders);

  transport::Rpc& rpc_;
  MasterService& service_;
  SpillCoordinatorConfig cfg_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Rank, std::deque<Job>> queues_;
  std::map<Rank, uint64_t> pending_bytes_;
  struct Failure {
    Nanos until{0};   // OnEvict declines this rank's blocks until then
    std::string why;  // the failed spill's status
  };
  std::map<Rank, Failure> failed_;
  SteadyClock clock_;
  size_t in_flight_ = 0;  // jobs taken by the sender and not yet completed
  bool stopping_ = false;
  SpillCoordinatorStats stats_;
  std::thread sender_;
  std::mutex recovery_mu_;  // guards recovery_tombstones_
  // AddRecovered's writers of tombstones for superseded versions; joined by Stop.
  std::vector<std::thread> recovery_tombstones_;
};

}  // namespace mooncake::store

// StoreRankNode: what a store rank runs besides its DRAM segment (which the job registers and
// exports at bootstrap): with store.ssd = on, the HDF5 tier under its own folder (recovering what
// the files hold) and the SSD service that spills, promotes and serves reads for the master and
// the clients, forwarding the tier's LRU drops to the master. ServeNode and the store service
// each hold one on their store ranks.
//
// The tier's set-up policy lives here, not in the launcher: buckets sized from the capacity, the
// LRU on only when a full store may evict (store.when_full = evict).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "store/hdf5/tier.h"
#include "store/net/ssd_messages.h"
#include "store/ssd/ssd_store_service.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::store {

struct StoreRankConfig {
  bool ssd = false;             // store.ssd: open a tier (otherwise the node does nothing)
  std::string ssd_dir;          // this rank's tier folder (created if missing)
  uint64_t ssd_capacity = 0;    // bytes of bucket files
  uint64_t spill_queue = 0;     // bytes of spills waiting for the disk
  bool keep_when_full = false;  // store.when_full = keep: a full tier refuses, deletes nothing
  // The bucket files' attributes: what the blocks are.
  std::string model_preset, kv_layout;
};

// A store rank's tier counters, as they travel in its RankReport (ssd_summary.h adds them up
// over the store ranks). All zero without a tier.
struct SsdRankCounters {
  uint64_t spilled = 0, spills_refused = 0, spill_errors = 0, promoted = 0;
  uint64_t reads_served = 0, read_failures = 0, dropped_by_lru = 0;
  uint64_t blocks_on_disk = 0, buckets = 0;

  void Add(const SsdRankCounters& o) {
    spilled += o.spilled, spills_refused += o.spills_refused, spill_errors += o.spill_errors;
    promoted += o.promoted, reads_served += o.reads_served, read_failures += o.read_failures;
    dropped_by_lru += o.dropped_by_lru, blocks_on_disk += o.blocks_on_disk, buckets += o.buckets;
  }
  MC_WIRE_FIELDS(spilled, spills_refused, spill_errors, promoted, reads_served, read_failures,
                 dropped_by_lru, blocks_on_disk, buckets)
};

// `all` as parts whose encodings stay near `max_part_bytes`: the first carries the counters,
// every part the highest version on disk; their sum (RecoveryTotals::Add) is `all`.
std::vector<RecoveredBlocks> SplitRecovered(RecoveredBlocks all, size_t max_part_bytes = 8u << 20);

class StoreRankNode {
 public:
  // `transport`, `rpc` and the segment's memory must outlive the node; `master` is the rank of
  // the store's master.
  StoreRankNode(StoreRankConfig cfg, Rank self, Rank master, transport::Transport& transport,
                transport::Rpc& rpc, std::span<std::byte> segment);
  ~StoreRankNode();
  StoreRankNode(const StoreRankNode&) = delete;
  StoreRankNode& operator=(const StoreRankNode&) = delete;

  // Opens the tier (recovery scans its files) and registers the SSD handlers: before peers may
  // call. Without store.ssd nothing to do.
  Status Start();
  // What recovery found, for the master (empty without a tier).
  RecoveredBlocks Recovered() const;
  // Sends Recovered() to the master over the RPC (StoreMsg::kRecoveryReport) in parts of a few
  // MiB, each admitted before the next goes (a large tier's report exceeds one RPC payload).
  // Nothing to send without a tier. A store rank that joins a running job reports the same way.
  Status ReportRecovered(Nanos timeout);
  // The tier's counters after its queue drained (zero without a tier).
  SsdRankCounters SsdCounters();
  bool has_tier() const { return tier_ != nullptr; }

 private:
  hdf5::Hdf5TierOptions TierOptions();
  void LogRecovery(const std::string& dir) const;

  StoreRankConfig cfg_;
  Rank self_, master_;
  transport::Transport& transport_;
  transport::Rpc& rpc_;
  std::span<std::byte> segment_;
  // The tier is declared after the service so it is destroyed first: its destructor may still
  // report LRU drops through the service.
  std::unique_ptr<SsdStoreService> service_;
  std::unique_ptr<hdf5::Hdf5Tier> tier_;
  hdf5::RecoveryReport recovery_;
};

}  // namespace mooncake::store

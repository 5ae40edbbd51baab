// The store's metadata master (store/master.h) driven on the simulator's virtual clock: the same
// allocation, lease, watermark and LRU eviction code the conductor rank runs in a live job. The
// simulator calls it where the live prefill role calls the store: ReadPrefix where the prefill
// rank gets its prefix blocks (BatchGet, 128 keys per call, stopping after the first call with
// a miss; here BatchExists, which leases and refreshes alike), Write where it puts the blocks of a
// finished chunk (BatchPutStart, the bytes, then BatchPutEnd). Objects are KV blocks keyed by their
// hash id. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "sim/sim_config.h"
#include "store/master.h"

namespace mooncake::sim {

struct StoreSimStats {
  uint64_t get_hits = 0;      // prefix blocks found (and leased)
  uint64_t get_misses = 0;    // prefix blocks the scheduler counted on but the store lacked
  uint64_t puts = 0;          // blocks made visible
  uint64_t put_exists = 0;    // already stored by another request (a success)
  uint64_t put_failures = 0;  // no space (everything leased or in flight), ...
};

class StoreSim {
 public:
  // `model.ranks` must be > 0 (ValidateSimConfig checks the sizes).
  explicit StoreSim(const StoreMasterModel& model);

  // How many leading blocks of `blocks` the store holds, read as the prefill role reads them.
  int ReadPrefix(Nanos now, std::span<const BlockHash> blocks);
  // Stores `blocks` (a chunk's new blocks) as the prefill role's writer does.
  void Write(Nanos now, std::span<const BlockHash> blocks);

  const StoreSimStats& stats() const { return stats_; }
  store::MasterStats master_stats() const { return master_.Stats(); }
  // DRAM bytes in use over all segments.
  uint64_t used_bytes() const;

 private:
  static constexpr size_t kBatchKeys = 128;  // as the prefill role batches its store calls
  void Keys(std::span<const BlockHash> blocks);

  StoreMasterModel model_;
  ManualClock clock_;
  store::MetadataMaster master_;
  store::ReplicateConfig replicate_;
  std::vector<std::string> keys_;   // scratch
  std::vector<uint64_t> sizes_;     // scratch
  std::vector<std::string> ended_;  // scratch
  std::vector<uint64_t> checksums_;
  StoreSimStats stats_;
};

}  // namespace mooncake::sim

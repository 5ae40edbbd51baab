#include "store/node/ssd_summary.h"

#include <cstdio>

#include "store/master.h"
#include "store/node/store_rank_node.h"

namespace mooncake::store {
namespace {

void AddRecovery(const RecoveryTotals& r, const SpillCoordinatorStats& c,
                 std::map<std::string, double>& e) {
  e["ssd_blocks_recovered"] = static_cast<double>(r.recovered);
  e["ssd_blocks_dropped_at_recovery"] = static_cast<double>(r.dropped);
  e["ssd_recovery_dropped_torn"] = static_cast<double>(r.torn);
  e["ssd_recovery_dropped_superseded"] = static_cast<double>(r.superseded);
  e["ssd_recovery_dropped_tombstoned"] = static_cast<double>(r.tombstoned);
  e["ssd_recovery_unreadable_files"] = static_cast<double>(r.unreadable_files);
  e["ssd_recovery_rejected_by_master"] = static_cast<double>(c.recovery_rejected);
}

}  // namespace

std::string SsdSummary(MasterNode& master, const SsdRankCounters& sum,
                       std::map<std::string, double>* extra) {
  const SpillCoordinatorStats c =
      master.coordinator() ? master.coordinator()->Stats() : SpillCoordinatorStats{};
  const MasterStats m = master.service().WithMaster([](MetadataMaster& mm) { return mm.Stats(); });
  const RecoveryTotals& r = master.recovery();
  const uint64_t dropped = c.refused_at_conductor + c.refused_by_tier + c.spill_failures;
  auto& e = *extra;
  e["ssd_blocks_spilled"] = static_cast<double>(c.spilled);
  // Declined spills stayed in DRAM (store.when_full = keep) or were dropped (evict): the
  // master's objects_lost_* counters say what became of the objects.
  e["ssd_spills_declined_queue_full"] =
      static_cast<double>(c.refused_at_conductor + c.refused_by_tier);
  e["ssd_spills_failed_kept_in_dram"] = static_cast<double>(m.spills_failed_kept);
  e["ssd_spill_failures"] = static_cast<double>(c.spill_failures);
  e["ssd_hits"] = static_cast<double>(m.ssd_hits);
  e["ssd_blocks_read"] = static_cast<double>(sum.reads_served);
  e["ssd_read_failures"] = static_cast<double>(sum.read_failures);
  e["ssd_promotions"] = static_cast<double>(c.promotions);
  e["ssd_dropped_by_tier_lru"] = static_cast<double>(sum.dropped_by_lru);
  e["ssd_blocks_on_disk"] = static_cast<double>(sum.blocks_on_disk);
  AddRecovery(r, c, e);
  e["ssd_tombstones_written"] = static_cast<double>(c.tombstones);
  e["ssd_tombstone_failures"] = static_cast<double>(c.tombstone_failures);
  char line[512];
  std::snprintf(
      line, sizeof line,
      "%-28s %llu spilled (%llu not: queue full or error), %llu hits from SSD "
      "(%llu read failures), %llu promoted; %llu recovered, %llu dropped at recovery\n",
      "ssd tier", static_cast<unsigned long long>(c.spilled),
      static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(m.ssd_hits),
      static_cast<unsigned long long>(sum.read_failures),
      static_cast<unsigned long long>(c.promotions), static_cast<unsigned long long>(r.recovered),
      static_cast<unsigned long long>(r.dropped));
  return line;
}

}  // namespace mooncake::store

// The seam between the DRAM tier's eviction and a second tier (the HDF5 SSD tier).
#pragma once

#include <cstdint>
#include <string>

#include "store/types.h"

namespace mooncake::store {

// One DRAM replica the master has decided to evict. `ticket` names it in CompleteSpill.
struct EvictedReplica {
  uint64_t ticket = 0;
  std::string key;
  uint64_t version = 0;  // the object's version (ObjectView::version)
  uint64_t size = 0;
  uint64_t checksum = 0;
  ReplicaLocation location;  // tier kDram: the bytes still sit there
};

// An SSD-resident object the master decided to bring back to DRAM (after `promote_after` gets
// served from SSD). `dram` is a region the master reserved on the rank that holds `ssd`; it stays
// hidden until MetadataMaster::CompletePromote(ticket, ok).
struct PromotionOrder {
  uint64_t ticket = 0;
  std::string key;
  uint64_t version = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
  ReplicaLocation ssd;   // tier kSsd: where the bytes are
  ReplicaLocation dram;  // tier kDram, same rank: where to copy them
};

class EvictionSink {
 public:
  virtual ~EvictionSink() = default;
  // Called on the master's thread while it evicts. Return true to take the replica (spill it):
  // the master keeps its DRAM region reserved and still serves it to gets, so the bytes stay
  // intact until MetadataMaster::CompleteSpill(ticket, ...) is called (from the master's thread).
  // Return false to decline it: the region is freed at once, unless this is the object's last
  // copy and the master keeps such objects (WhenFull::kKeep). Must not call back into the master.
  virtual bool OnEvict(const EvictedReplica& replica) = 0;
  // Why OnEvict declines blocks of `rank` now ("the SSD tier of store rank 1 is full"), for the
  // NoSpace a put gets when nothing can leave that rank's DRAM. Same thread and rules.
  virtual std::string WhyDeclined(Rank) const { return "the second tier declines spills"; }
  // Same thread and rules. Return true to carry the promotion out (then CompletePromote must
  // follow); false releases the reserved region at once.
  virtual bool OnPromote(const PromotionOrder&) { return false; }
};

}  // namespace mooncake::store

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
  uint64_t size = 0;
  uint64_t checksum = 0;
  ReplicaLocation location;  // tier kDram: the bytes still sit there
};

class EvictionSink {
 public:
  virtual ~EvictionSink() = default;
  // Called on the master's thread while it evicts. Return true to take the replica (spill it):
  // the master then hides it from gets but keeps its DRAM region reserved, so the bytes stay
  // intact until MetadataMaster::CompleteSpill(ticket, ...) is called (from the master's thread).
  // Return false to drop it: the region is freed at once. Must not call back into the master.
  virtual bool OnEvict(const EvictedReplica& replica) = 0;
};

}  // namespace mooncake::store

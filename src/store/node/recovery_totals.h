// What the store ranks recovered from their SSD tiers after a restart, added up on the master's
// rank (MasterNode::AdmitRecovered): for the start-up line and summary.json's ssd_* counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/net/ssd_messages.h"

namespace mooncake::store {

struct RecoveryTotals {
  uint64_t recovered = 0, dropped = 0;
  // The drops by reason (store/ssd_tier.h RecoveryReport), and files that could not be read.
  uint64_t torn = 0, superseded = 0, tombstoned = 0, unreadable_files = 0;
  std::vector<std::string> keys;  // the store key of every recovered block

  void Add(const RecoveredBlocks& blocks);
  // "store: N SSD blocks recovered, ..." with a newline; empty when nothing was found on disk.
  std::string Line() const;
};

}  // namespace mooncake::store

#include "store/node/recovery_totals.h"

#include <cstdio>

namespace mooncake::store {

void RecoveryTotals::Add(const RecoveredBlocks& blocks) {
  for (const auto& b : blocks.blocks) keys.push_back(b.key);
  recovered += blocks.blocks.size();
  dropped += blocks.dropped;
  torn += blocks.dropped_torn;
  superseded += blocks.dropped_superseded;
  tombstoned += blocks.dropped_tombstoned;
  unreadable_files += blocks.unreadable_files;
}

std::string RecoveryTotals::Line() const {
  if (recovered + dropped + unreadable_files == 0) return "";
  // The master keeps one version per key over all ranks: a lower one another rank recovered is
  // superseded too (SpillCoordinator counts it as rejected).
  char line[256];
  std::snprintf(line, sizeof line,
                "store: %llu SSD blocks recovered, %llu dropped (%llu torn, %llu superseded, "
                "%llu tombstoned), %llu unreadable files\n",
                static_cast<unsigned long long>(recovered),
                static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(torn),
                static_cast<unsigned long long>(superseded),
                static_cast<unsigned long long>(tombstoned),
                static_cast<unsigned long long>(unreadable_files));
  return line;
}

}  // namespace mooncake::store

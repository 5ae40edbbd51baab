// The end of the store service on the master's rank: summary.json's counters and the stdout
// table, from the master's counters and every rank's report (the serving job's is summary.h).
#pragma once

#include <string>

#include "serve/rank_report.h"
#include "serve/store_service_node.h"

namespace mooncake::serve {

struct StoreSummaryInputs {
  int ranks = 0, store_ranks = 0;
  bool ssd = false;             // store.ssd: the SSD tier's counters and line
  bool keep_when_full = false;  // store.when_full = keep: no loss is the store's policy
  std::string run_dir;          // the run folder (created)
};

// Master's rank only. `all` is the sum of every rank's report (this one's included). Returns
// false when an acknowledged object was lost (the job then exits 1).
bool WriteStoreSummary(StoreServiceNode& node, const RankReport& all, const StoreSummaryInputs& in);

}  // namespace mooncake::serve

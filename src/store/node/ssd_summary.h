// The SSD tier's part of a job's summary, on the master's rank: the spill coordinator's and the
// master's counters, what recovery found, and every store rank's tier counters added up.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/node/master_node.h"
#include "store/node/store_rank_node.h"

namespace mooncake::store {

// `sum`: every store rank's StoreRankNode::SsdCounters added up. Fills `extra` (summary.json's
// ssd_* keys) and returns the summary table's line.
std::string SsdSummary(MasterNode& master, const SsdRankCounters& sum,
                       std::map<std::string, double>* extra);

}  // namespace mooncake::store

// The store's wiring in the live job: its two nodes' settings (store/node/node_settings.h) from
// the job's options, and the collective steps of their start (the run folder every rank knows,
// the SSD tier's recovered blocks admitted before any request).
//
// - The master's rank (the conductor) holds a store::MasterNode: with store.ssd = on, its spill
//   coordinator is the master's eviction sink.
// - Store ranks hold a store::StoreRankNode: with store.ssd = on, an HDF5 tier under
//   <ssd dir>/rank<r> (recovering what the files hold) and its SSD service.
// - Before requests are admitted, every store rank reports its recovered blocks to the master
//   over the RPC (StoreRankNode::ReportRecovered); the master admits them. At the end the tiers'
//   counters travel in the store ranks' reports (over the RPC, so a dead rank does not hang the end
//   of the job).
//
// Every function named Collective* must be called by every rank of the job, in the same order.
#pragma once

#include <string>

#include "app/job_context.h"
#include "store/node/node_settings.h"

namespace mooncake::app {

// The job's run folder as rank 0 decided it (--out or runs/<UTC timestamp>), known to every rank.
std::string CollectiveRunDir(JobContext& ctx);

// The store's master (store.* options, store/node/node_settings.h; a fresh restart epoch).
store::MasterNodeConfig MasterNodeConfigFrom(const JobOptions& options);

// Store rank `rank`'s set-up (its tier under store.ssd_dir, or <run_dir>/ssd). What the bucket
// files say of the blocks: `model_preset` and `kv_layout`, or when empty the cost model's scaled
// blocks of the job's model.
store::StoreRankConfig StoreRankConfigFrom(const JobOptions& options, const std::string& run_dir,
                                           int rank, std::string model_preset = "",
                                           std::string kv_layout = "");

// Store ranks send their recovered blocks (`store_rank`: null on other ranks) and every rank
// waits until all were admitted; the master's rank (`master`: null on other ranks) prints what
// was found.
void CollectiveAdmitRecovered(JobContext& ctx, store::StoreRankNode* store_rank,
                              store::MasterNode* master);

}  // namespace mooncake::app

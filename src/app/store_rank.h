// The SSD tier in the live job (store.ssd = on): what store ranks and the conductor do.
//
// - Store ranks open an Hdf5Tier under <ssd dir>/rank<r> (recovering what the files hold),
//   serve the spill / promote / SSD-read messages (store::SsdStoreService) and forward the
//   tier's LRU drops to the master.
// - The conductor attaches a store::SpillCoordinator to the master as its EvictionSink.
// - Before requests are admitted, every store rank reports its recovered blocks (MPI gather);
//   the conductor AddReplica()s them. At the end the tiers' counters travel in the store ranks'
//   reports (over the RPC, so a dead rank does not hang the end of the job).
//
// Every function named Collective* must be called by every rank of the job, in the same order.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "app/job_context.h"
#include "common/status.h"
#include "store/hdf5/tier.h"
#include "store/net/master_service.h"
#include "store/ssd/ssd_coordinator.h"
#include "store/ssd/ssd_store_service.h"

namespace mooncake::app {

struct SsdJob {
  // What the bucket files' attributes say of the blocks (set before the tier opens; empty: the
  // cost model's scaled blocks of o.sched.model).
  std::string model_preset, kv_layout;
  // Store rank. The tier is declared last of the two so it is destroyed first: its destructor
  // may still report LRU drops through the service.
  std::unique_ptr<store::SsdStoreService> service;
  std::unique_ptr<store::hdf5::Hdf5Tier> tier;
  store::hdf5::RecoveryReport recovery;
  // Conductor.
  std::unique_ptr<store::SpillCoordinator> coordinator;
  uint64_t recovered = 0, dropped_at_recovery = 0;
  // Conductor: recovery drops by reason over every store rank (store/ssd_tier.h RecoveryReport).
  uint64_t recovery_torn = 0, recovery_superseded = 0, recovery_tombstoned = 0,
           recovery_unreadable_files = 0;
  std::vector<std::string> recovered_keys;  // conductor: the store keys of every recovered block
};

// The master's first object version: the wall clock in nanoseconds, a restart epoch that outranks
// every version an earlier run over the same SSD folder wrote (recovery lifts it further when a
// folder holds higher ones, e.g. after the clock went back).
uint64_t WallClockVersion();

// The job's run folder as rank 0 decided it (--out or runs/<UTC timestamp>), known to every rank.
std::string CollectiveRunDir(JobContext& ctx);

// Store ranks: open the tier and register handlers; conductor: attach the coordinator to
// `master` (null elsewhere). Call before the "handlers registered" barrier. Not collective.
Status SetUpSsd(JobContext& ctx, const std::string& run_dir, store::MasterService* master,
                SsdJob* job);

// Store ranks send their recovered blocks; the conductor records them with the master.
void CollectiveAdmitRecovered(JobContext& ctx, SsdJob& job);

// Conductor: stop spilling (completes what is queued) before the store ranks are told to stop.
void StopSpilling(SsdJob& job);

// A store rank's tier counters, for its RankReport (empty without a tier).
std::vector<uint64_t> SsdCounters(SsdJob& job);

// Conductor: `sum` is every store rank's SsdCounters added up. Fills `extra` (summary.json) and
// returns the summary table's line.
std::string SsdSummary(SsdJob& job, store::MasterService* master, std::vector<uint64_t> sum,
                       std::map<std::string, double>* extra);

}  // namespace mooncake::app

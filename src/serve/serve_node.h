// One rank's part of a serving job, with no MPI and no launcher: the roles it plays, built on
// narrow dependencies (this rank's transport and RPC, who plays which role, the store's segments,
// the settings). The live job (src/app) drives it between its bootstrap barriers; tests drive
// several in one process over the loopback transport.
//
// Order: Create -> Start (registers every handler and starts the heartbeats; all ranks must have
// started before traffic) -> SyncClock (prefill, decode) -> then
//   conductor: RunConductor -> StopOthers -> Finish -> CollectReports -> ShutdownOthers
//   others:    WaitForStop -> Finish -> SendReport -> WaitForShutdown.
// The end of the job goes over the RPC, never through an MPI collective: ranks declared dead
// (cluster/membership.h) are skipped, so the survivors end cleanly (rank_lifecycle.h). The store's
// parts are store/node's MasterNode (conductor) and StoreRankNode (store ranks).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "conductor/scheduler.h"
#include "engine/cost_model.h"
#include "engine/kv_layout.h"
#include "serve/conductor_link.h"
#include "serve/conductor_role.h"
#include "serve/decode_role.h"
#include "serve/master_failover.h"
#include "serve/prefill_role.h"
#include "serve/rank_lifecycle.h"
#include "serve/rank_report.h"
#include "serve/serve_config.h"
#include "serve/serve_context.h"
#include "serve/serve_standby.h"
#include "store/net/client.h"
#include "store/net/journal_sender.h"
#include "store/net/master_service.h"
#include "store/net/topology.h"
#include "store/node/master_node.h"
#include "store/node/standby_node.h"
#include "store/node/store_rank_node.h"

namespace mooncake::serve {

struct ServeNodeDeps {
  transport::Transport& transport;
  transport::Rpc& rpc;
  ServePeers peers;
  store::StoreTopology topology;      // every store rank's DRAM segment
  std::span<std::byte> local_buffer;  // decode: its registered KV receive buffer
  engine::Engine* engine = nullptr;   // prefill and decode: the compute (outlives the node)
  // The standby conductor (docs/FAULTS.md, "A standby conductor (the serving job)"): it follows
  // the active's journals and takes over when the active falls silent. Rank{-1}: none.
  Rank standby = Rank{-1};
};

// What only the conductor needs.
struct ConductorSetup {
  conductor::SchedulerConfig scheduler;  // instance counts are taken from the peers
  const std::vector<trace::TraceRequest>* requests = nullptr;
  // The store's master (its copy_timeout is taken from ServeConfig::phase_timeout).
  store::MasterNodeConfig master;
};

class ServeNode {
 public:
  // `config`, `cost`, `layout` and `conductor.requests` must outlive the node. `store_rank`:
  // what a store rank sets up besides its segment (its SSD tier).
  ServeNode(ServePart part, ServeNodeDeps deps, const ServeConfig& config,
            const engine::CostModel& cost, const engine::KvLayout& layout,
            ConductorSetup conductor = {}, store::StoreRankConfig store_rank = {});
  ~ServeNode();
  ServeNode(const ServeNode&) = delete;
  ServeNode& operator=(const ServeNode&) = delete;

  // Builds this rank's roles and registers their handlers (and the stop handler). A store rank
  // opens its SSD tier here: an error then is the tier's.
  Status Start();
  // Prefill and decode ranks: measure the offset of this rank's clock to the conductor's.
  Status SyncClock();
  // Conductor: replays every request until each is resolved or the job deadline passes.
  void RunConductor();
  // Conductor: tells every live rank to stop. Errors of the stop calls go into the report.
  void StopOthers() { lifecycle_.StopOthers(); }
  // Other ranks: wait for the conductor's stop (bounded by the job deadline + phase timeout).
  void WaitForStop() { lifecycle_.WaitForStop(); }
  bool stop_requested() const { return lifecycle_.stop_requested(); }
  // Stops the roles and returns this rank's counters.
  RankReport Finish();
  // Other ranks: send this rank's report to the conductor.
  Status SendReport(const RankReport& report) { return lifecycle_.SendReport(report); }
  // Conductor: every live rank's report (and `own`), waiting up to the phase timeout; a rank
  // that died meanwhile is skipped, one that did not answer is an error in the result.
  RankReport CollectReports(const RankReport& own) { return lifecycle_.CollectReports(own); }
  // Conductor: tells every live rank that the job is over (with the final membership).
  void ShutdownOthers() { lifecycle_.ShutdownOthers(); }
  // Other ranks: wait for the conductor's shutdown (bounded by the phase timeout).
  void WaitForShutdown() { lifecycle_.WaitForShutdown(); }

  // With a standby conductor. The standby: true once it took over (it conducts from then on:
  // RunConductor, CollectReports, ShutdownOthers; the run folder is run_dir()). The active: true.
  bool conducts() const { return lifecycle_.conducts(); }
  // This rank is the standby conductor (whether or not it took over).
  bool is_standby() const { return deps_.standby == ctx_.peers.self; }
  // The conductor's run folder: the job's, or the one the active journaled to its standby.
  std::string run_dir() const;
  // The active: runs when its standby answered that it took over (this rank must end at once:
  // it acknowledges nothing more), or the standby when the active fenced it. Set before Start.
  void OnFenced(std::function<void(const Status&)> on_fenced) { on_fenced_ = std::move(on_fenced); }
  // summary.json's failover block (`standby` false without one).
  using Failover = FailoverReport;  // takeover_ms: -> its first decision
  Failover failover() const;

  // Others: `on_lost` runs (heartbeat thread) when the conductor is unreachable or fenced this
  // rank; the live job ends the process there. Set before Start.
  void OnConductorLost(HeartbeatSender::LostHandler on_lost) {
    lifecycle_.OnConductorLost(std::move(on_lost));
  }
  // Conductor: every rank declared dead so far. Others: whether any rank was (as last heard).
  std::vector<DeadRank> dead_ranks() const { return lifecycle_.dead_ranks(); }
  bool peers_lost() const { return lifecycle_.peers_lost(); }

  ServePart part() const { return part_; }
  const ServeContext& context() const { return ctx_; }
  const store::StoreTopology& topology() const { return deps_.topology; }
  store::MasterService* master() { return master_ ? &master_->service() : nullptr; }
  store::MasterNode* master_node() { return master_ ? &*master_ : nullptr; }
  store::StoreRankNode* store_rank() { return store_rank_ ? &*store_rank_ : nullptr; }
  conductor::Scheduler* scheduler() { return scheduler_ ? &*scheduler_ : nullptr; }
  ConductorRole* conductor_role() { return conductor_ ? &*conductor_ : nullptr; }

 private:
  // `restored`: a standby that took over (the state the active journaled).
  void StartConductor(const ServeState* restored = nullptr);
  void StartClient();
  bool has_standby() const { return deps_.standby.value >= 0; }
  // The active: the store master's journal and the serving state's, to the standby.
  void StartJournals();
  // The standby: follows both journals, heartbeats the active, takes over when it falls silent.
  void StartStandby();
  void OnActiveLost(const Status& why);
  Status TakeOver();
  // Prefill, decode and store ranks: a view named a new conductor (the standby took over).
  void OnConductorChanged(Rank conductor);
  void OnRankDead(const DeadRank& dead);
  // The job's ranks with their roles, at start.
  cluster::Membership InitialMembership() const;

  ServePart part_;
  ServeNodeDeps deps_;
  ConductorSetup setup_;
  store::StoreRankConfig store_rank_config_;
  ServeContext ctx_;
  RankLifecycle lifecycle_;  // stopped first in the destructor: no death reaches a stopped part
  std::unique_ptr<trace::RequestLog> request_log_;
  std::optional<store::MasterNode> master_;         // conductor
  std::optional<store::StoreRankNode> store_rank_;  // store ranks
  std::optional<store::StoreClient> client_;
  std::optional<conductor::Scheduler> scheduler_;
  std::optional<ConductorRole> conductor_;
  std::optional<PrefillRole> prefill_;
  std::optional<DecodeRole> decode_;
  std::optional<ConductorLink> link_;  // prefill and decode
  // The standby conductor (deps_.standby) and the active's side of it.
  std::optional<store::StandbyNode> store_standby_;
  std::optional<ServeFollower> follower_;
  std::unique_ptr<store::JournalSender> store_journal_;
  std::function<void(const Status&)> on_fenced_;
  mutable std::mutex failover_mutex_;
  Failover failover_;               // guarded by failover_mutex_
  std::string restored_run_dir_;    // guarded by failover_mutex_
  Nanos old_active_last_heard_{0};  // guarded by failover_mutex_ (steady clock)
};

// After a restart, blocks recovered from the SSD tier enter the conductor's prefix index so
// requests reuse them. They sit on store ranks, not on a prefill instance: each is attributed to
// one instance (hash % instances), from which kvcache_centric fetches it like any remote prefix.
// `keys` are store keys ("<model>/<hash>"); another model's keys are skipped. Returns how many
// entered the index.
size_t IndexRecoveredBlocks(conductor::Scheduler& scheduler, const std::vector<std::string>& keys,
                            const std::string& model_name, int prefill_instances);

}  // namespace mooncake::serve

// StoreServiceNode: one rank of the store service (job.mode = store, docs/CLIENT.md): the
// store's master (store::MasterNode, on the conductor's rank) or a store rank
// (store::StoreRankNode), with the membership and the end of the job that a serving job has
// (rank_lifecycle.h). It serves no requests: no cost model, no KV layout, no scheduler.
//
// With a standby conductor (`roles = conductor:2 ...`, docs/FAULTS.md): the active master
// journals every committed change to the standby (store::JournalSender) and acknowledges a
// put-end or remove only once the standby has it; the standby (store::StandbyNode) heartbeats
// the active like any rank, and when the active falls silent for the failure timeout, or at
// once when the active's process ended (its liveness link closed, cluster/liveness_link.h), it
// takes over: it rebuilds the master from the journal, fences the old active (membership epoch +
// 1), conducts the membership and tells every rank; store ranks follow it instead of exiting.
//
// Order: Start -> (the job's listeners and barriers) -> then
//   conductor: StopOthers -> Finish -> CollectReports -> ShutdownOthers
//   store ranks and a standby that did not take over: poll stop_requested -> Finish ->
//   SendReport -> WaitForShutdown.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cluster/liveness_link.h"
#include "serve/master_failover.h"
#include "serve/rank_lifecycle.h"
#include "serve/serve_config.h"
#include "store/net/journal_sender.h"
#include "store/net/topology.h"
#include "store/node/master_node.h"
#include "store/node/standby_node.h"
#include "store/node/store_rank_node.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::serve {

struct StoreServiceDeps {
  transport::Transport& transport;
  transport::Rpc& rpc;
  Rank self, master;
  store::StoreTopology topology;  // every store rank's DRAM segment
  std::span<std::byte> segment;   // a store rank's own (registered and exported at bootstrap)
  Rank standby = Rank{-1};        // the standby conductor (docs/FAULTS.md); Rank{-1}: none
  // Where a standby listens for the active's liveness link (cluster/liveness_link.h): the
  // option store.listen.
  std::string listen_address = "0.0.0.0";
};

class StoreServiceNode {
 public:
  // `part`: kConductor (the master's rank) or kStore. `config` must outlive the node.
  StoreServiceNode(ServePart part, StoreServiceDeps deps, const ServeConfig& config,
                   store::MasterNodeConfig master, store::StoreRankConfig store_rank);
  ~StoreServiceNode();
  StoreServiceNode(const StoreServiceNode&) = delete;
  StoreServiceNode& operator=(const StoreServiceNode&) = delete;

  // Starts the membership, then the master or the store rank (its SSD tier: an error is the
  // tier's). Registers every handler: call before peers may call.
  Status Start();

  // The end of the job (rank_lifecycle.h).
  void OnConductorLost(HeartbeatSender::LostHandler on_lost) {
    lifecycle_.OnConductorLost(std::move(on_lost));
  }
  bool stop_requested() const { return lifecycle_.stop_requested(); }
  void StopOthers() { lifecycle_.StopOthers(); }
  RankReport Finish() { return lifecycle_.Finish(); }
  Status SendReport(const RankReport& report) { return lifecycle_.SendReport(report); }
  RankReport CollectReports(const RankReport& own) { return lifecycle_.CollectReports(own); }
  void ShutdownOthers() { lifecycle_.ShutdownOthers(); }
  void WaitForShutdown() { lifecycle_.WaitForShutdown(); }
  // Drains (issue 33, item 4): the conductor tells a drained store rank to leave; that rank sees
  // leave_requested() and ends alone with exit 0.
  Status Dismiss(Rank rank) { return lifecycle_.Dismiss(rank); }
  // Joins: the conductor watches a store rank that joined (`mooncake store join`).
  Status Admit(Rank rank) { return lifecycle_.Admit(rank, cluster::Role::kStore); }
  bool leave_requested() const { return lifecycle_.leave_requested(); }
  // A leaving rank: no more heartbeats (RankLifecycle::Stop).
  void StopHeartbeats() { lifecycle_.Stop(); }
  std::vector<DeadRank> dead_ranks() const { return lifecycle_.dead_ranks(); }
  bool peers_lost() const { return lifecycle_.peers_lost(); }

  // A standby: runs (on the heartbeat thread) once this rank took over and its master serves,
  // for the app to open it to clients. Set before Start.
  void OnPromoted(std::function<void()> on_promoted) { on_promoted_ = std::move(on_promoted); }
  // The active: runs when the standby answered that it took over (this rank must end), or a
  // standby that the active fenced. Set before Start.
  void OnFenced(std::function<void(const Status&)> on_fenced) { on_fenced_ = std::move(on_fenced); }
  // The standby: the port of its liveness watch (cluster/liveness_link.h; 0 on other ranks or
  // when it could not listen), for the job's gather of listeners.
  uint16_t liveness_port() const { return liveness_ ? liveness_->port() : 0; }
  // The active, once the listeners are gathered: links to the standby's liveness watch at the
  // first of `hosts` that answers, so that its death (its process ending) is seen by the standby
  // at once. When none answers, the standby sees it by heartbeats only (logged).
  void LinkToStandby(const std::vector<std::string>& hosts, uint16_t port);
  // Conducting now: the master's rank from the start, or a standby that took over.
  bool conducts() const { return lifecycle_.conducts(); }
  // The membership epoch this rank holds now (the connection file names it).
  uint64_t epoch() const { return lifecycle_.epoch(); }
  // summary.json's failover block ({} without a standby).
  using Failover = FailoverReport;  // takeover_ms: -> the first request served
  Failover failover();

  // Null on the other part (a standby's master exists once it took over).
  store::MasterNode* master_node() { return master_ ? &*master_ : nullptr; }
  store::StoreRankNode* store_rank() { return store_rank_ ? &*store_rank_ : nullptr; }

 private:
  // A store rank died: its objects with no other replica are lost (no request recomputes them).
  void OnRankDead(const DeadRank& dead);
  // The active: starts the journal to the standby.
  void StartJournal();
  // The standby: the active fell silent, died (its liveness link ended) or fenced this rank.
  void OnActiveLost(const Status& why);
  Status TakeOver(const Status& why);
  // The standby: listens for the active's liveness link.
  void WatchActive();

  ServePart part_;
  StoreServiceDeps deps_;
  const ServeConfig& config_;
  store::MasterNodeConfig master_config_;
  store::StoreRankConfig store_rank_config_;
  std::optional<store::MasterNode> master_;
  std::optional<store::StoreRankNode> store_rank_;
  std::optional<store::StandbyNode> standby_;
  std::unique_ptr<store::JournalSender> journal_;
  std::unique_ptr<cluster::LivenessWatch> liveness_;      // the standby's
  std::unique_ptr<cluster::LivenessLink> liveness_link_;  // the active's, held for its life
  std::function<void()> on_promoted_;
  std::function<void(const Status&)> on_fenced_;
  mutable std::mutex failover_mutex_;
  Failover failover_;               // guarded by failover_mutex_
  Nanos old_active_last_heard_{0};  // the takeover's start (steady clock)
  // Declared last, destroyed first: no death reaches a destroyed master.
  RankLifecycle lifecycle_;
};

}  // namespace mooncake::serve

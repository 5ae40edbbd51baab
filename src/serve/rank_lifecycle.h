// RankLifecycle: one rank's membership and the end of the job, over the RPC: the conductor runs
// the failure detector and collects the others' reports; every other rank sends heartbeats and
// waits for the conductor's stop and shutdown. The serving job (ServeNode) and the store service
// (StoreServiceNode) end the same way; neither needs the other's parts for it.
//
// Order: Start (registers the stop, shutdown and report handlers; starts the heartbeats) -> then
//   conductor: StopOthers -> Finish -> CollectReports -> ShutdownOthers
//   others:    WaitForStop (or poll stop_requested) -> Finish -> SendReport -> WaitForShutdown.
// Ranks declared dead (cluster/membership.h) are skipped, so the survivors end cleanly.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/failure_detector.h"
#include "cluster/heartbeat_sender.h"
#include "cluster/membership.h"
#include "cluster/role.h"
#include "common/clock.h"
#include "serve/rank_report.h"
#include "serve/serve_config.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::serve {

using cluster::DeadRank;
using cluster::FailureDetector;
using cluster::HeartbeatSender;
using cluster::MembershipView;

// What a rank plays; its index is the slot of RankReport::peak_rss_bytes.
enum class ServePart { kConductor, kStore, kPrefill, kDecode };
// The part of a rank of role `role` (the same four).
inline ServePart ServePartOf(cluster::Role role) {
  switch (role) {
    case cluster::Role::kConductor:
      return ServePart::kConductor;
    case cluster::Role::kPrefill:
      return ServePart::kPrefill;
    case cluster::Role::kDecode:
      return ServePart::kDecode;
    case cluster::Role::kStore:
      break;
  }
  return ServePart::kStore;
}

class RankLifecycle {
 public:
  // `transport`, `rpc` and `config` must outlive it. `membership`: the job's ranks at start; the
  // conductor is the rank it names, and watches, stops and waits for every other rank live at
  // that moment (ranks that joined since included, dead ones not).
  RankLifecycle(ServePart part, transport::Transport& transport, transport::Rpc& rpc, Rank self,
                cluster::Membership membership, const ServeConfig& config);
  ~RankLifecycle();
  RankLifecycle(const RankLifecycle&) = delete;
  RankLifecycle& operator=(const RankLifecycle&) = delete;

  // Conductor: `on_dead` runs (detector's thread) for each rank declared dead. Others:
  // `on_lost` runs (heartbeat thread) when the conductor is unreachable or fenced this rank.
  // Set before Start.
  void OnRankDead(FailureDetector::DeathHandler on_dead) { on_dead_ = std::move(on_dead); }
  void OnConductorLost(HeartbeatSender::LostHandler on_lost) { on_lost_ = std::move(on_lost); }
  void Start();
  // Clears the transport's failure handler and stops the heartbeats or the detector.
  void Stop();

  // A standby conductor (docs/FAULTS.md). Others: follow `standby` when the
  // conductor falls silent (HeartbeatSender::FollowStandby). Set before Start.
  void FollowStandby(Rank standby) { follow_standby_ = standby; }
  // Others: evidence that `conductor` died (HeartbeatSender::ConductorDied). Any thread, after
  // Start.
  void ConductorDied(Rank conductor, const std::string& why);
  // Others: `on_changed` runs (heartbeat thread) when a view names a new conductor (a standby
  // took over). Set before Start.
  void OnConductorChanged(std::function<void(Rank)> on_changed) {
    on_changed_ = std::move(on_changed);
  }
  // The standby takes over: its heartbeats stop and it conducts `membership` (in which it is
  // the conductor and the old one dead) from now on: the failure detector starts, watching every
  // live rank, and tells them the new view.
  void Promote(cluster::Membership membership);
  // Conducting now (the conductor from the start, or a standby promoted).
  bool conducts() const { return conducting_.load(); }
  // Others: the membership as last heard, when the conductor last answered (the sender's steady
  // clock), and whether it fenced this rank.
  cluster::Membership membership() const;
  // The membership epoch this rank holds now (the conductor's own, or the last view heard).
  uint64_t epoch() const;
  Nanos last_conductor_reply() const;
  bool fenced_by_conductor() const;
  // Conductor: declares `rank` dead now (a standby that stopped taking the journal).
  void DeclareDead(Rank rank, const std::string& why);

  // Conductor: tells every live rank to stop. Errors of the stop calls go into the report.
  void StopOthers();
  // Others: wait for the conductor's stop (bounded by the job deadline + phase timeout).
  void WaitForStop();
  bool stop_requested() const { return stop_; }
  // This rank's counters of the RPC and transport, its peak RSS, and the errors so far.
  RankReport Finish();
  Status SendReport(const RankReport& report);
  // Conductor: every live rank's report (and `own`), waiting up to the phase timeout; a rank
  // that died meanwhile is skipped, one that did not answer is an error in the result.
  RankReport CollectReports(const RankReport& own);
  // Conductor: tells every live rank that the job is over (with the final membership).
  void ShutdownOthers();
  // Others: wait for the conductor's shutdown (bounded by the phase timeout).
  void WaitForShutdown();
  // Conductor: tells `rank` (a drained store rank) to leave, then stops watching it: it is no
  // longer live, and not dead. The error of the call when the rank did not answer (it is
  // retired all the same: what it held was moved).
  Status Dismiss(Rank rank);
  // Conductor: `rank` joined the running job as `role` (a store rank, `mooncake store join`):
  // watched, stopped and waited for from now on like the others.
  Status Admit(Rank rank, cluster::Role role);
  // Others: the conductor told this rank to leave (kMsgLeave): it ends alone, exit 0.
  bool leave_requested() const { return leave_; }

  // Conductor: every rank declared dead so far. Others: whether any rank was (as last heard).
  std::vector<DeadRank> dead_ranks() const;
  bool peers_lost() const;

 private:
  void RegisterEndHandlers();
  void StartDetector();
  // Conductor: every live rank but itself, as the membership says now.
  std::vector<int> Others() const;

  ServePart part_;
  transport::Transport& transport_;
  transport::Rpc& rpc_;
  Rank self_, conductor_;
  cluster::Membership initial_;
  const ServeConfig& config_;
  SteadyClock clock_;
  std::atomic<bool> stop_{false}, shutdown_{false}, leave_{false};
  RankReport report_;
  FailureDetector::DeathHandler on_dead_;
  HeartbeatSender::LostHandler on_lost_;
  std::function<void(Rank)> on_changed_;
  std::mutex reports_mutex_;
  std::condition_variable reports_cv_;
  std::map<int, RankReport> reports_;            // conductor: by rank
  std::unique_ptr<FailureDetector> detector_;    // conductor
  std::unique_ptr<HeartbeatSender> heartbeats_;  // others (kept after a promotion: stopped)
  Rank follow_standby_;
  std::atomic<bool> conducting_{false};  // set once detector_ runs (another thread may ask)
};

}  // namespace mooncake::serve

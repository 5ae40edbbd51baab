#include "serve/store_service_node.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/units.h"

namespace mooncake::serve {
namespace {

// The master's rank conducts; a standby is a live member too (it heartbeats the master); every
// rank holding a segment is a store rank.
cluster::Membership StoreServiceMembership(const store::StoreTopology& topology, Rank master,
                                           Rank standby) {
  std::vector<cluster::Member> members;
  if (standby.value >= 0) members.push_back({standby, cluster::Role::kConductor});
  for (const auto& seg : topology.segments) members.push_back({seg.rank, cluster::Role::kStore});
  return cluster::Membership(master, members);
}

double Millis(Nanos d) { return static_cast<double>(d.count()) / 1e6; }

// The job token as the liveness link presents it.
std::vector<std::byte> TokenBytes(const transport::JobToken& token) {
  std::vector<std::byte> out(16);
  std::memcpy(out.data(), &token.hi, 8);
  std::memcpy(out.data() + 8, &token.lo, 8);
  return out;
}

}  // namespace

StoreServiceNode::StoreServiceNode(ServePart part, StoreServiceDeps deps, const ServeConfig& config,
                                   store::MasterNodeConfig master,
                                   store::StoreRankConfig store_rank)
    : part_(part),
      deps_(std::move(deps)),
      config_(config),
      master_config_(std::move(master)),
      store_rank_config_(std::move(store_rank)),
      lifecycle_(part, deps_.transport, deps_.rpc, deps_.self,
                 StoreServiceMembership(deps_.topology, deps_.master, deps_.standby), config) {}

StoreServiceNode::~StoreServiceNode() {
  if (liveness_) liveness_->Stop();  // its handler reaches lifecycle_
  lifecycle_.Stop();
  if (master_) master_->service().SetJournal(nullptr);
  if (journal_) journal_->Stop();
}

Status StoreServiceNode::Start() {
  lifecycle_.OnRankDead([this](const DeadRank& d) { OnRankDead(d); });
  const bool has_standby = deps_.standby.value >= 0;
  failover_.standby = has_standby;
  if (deps_.self == deps_.master) {
    lifecycle_.Start();
    master_.emplace(master_config_, deps_.transport, deps_.rpc, deps_.topology);
    MC_RETURN_IF_ERROR(master_->Start());
    if (has_standby) StartJournal();
    return Status::Ok();
  }
  if (has_standby && deps_.self == deps_.standby) {
    standby_.emplace(deps_.rpc, deps_.master, deps_.topology);
    standby_->Start();
    lifecycle_.OnConductorLost([this](const Status& why) { OnActiveLost(why); });
    lifecycle_.Start();
    WatchActive();
    return Status::Ok();
  }
  if (has_standby) lifecycle_.FollowStandby(deps_.standby);
  lifecycle_.Start();
  store_rank_.emplace(store_rank_config_, deps_.self, deps_.master, deps_.transport, deps_.rpc,
                      deps_.segment);
  return store_rank_->Start();
}

void StoreServiceNode::WatchActive() {
  auto watch = cluster::LivenessWatch::Listen(deps_.listen_address, deps_.master,
                                              TokenBytes(deps_.rpc.job_token()));
  if (!watch.ok()) {
    log::Warn(
        "the standby conductor cannot listen for the active's liveness link ({}): it sees "
        "the active's death by heartbeats only, after cluster.failure_timeout",
        watch.status().ToString());
    return;
  }
  liveness_ = std::move(*watch);
  liveness_->Start([this](Rank active, const std::string& why) {
    // After a takeover (a stopped active that woke and ended) or the stop, its end is expected.
    if (lifecycle_.conducts() || lifecycle_.stop_requested()) return;
    log::Warn("the active conductor (rank {}) died: {}", active.value, why);
    lifecycle_.ConductorDied(active, why);
  });
}

void StoreServiceNode::LinkToStandby(const std::vector<std::string>& hosts, uint16_t port) {
  if (port == 0) {
    log::Warn(
        "the standby conductor (rank {}) has no liveness port: it will see this rank's "
        "death by heartbeats only",
        deps_.standby.value);
    return;
  }
  auto link = cluster::LivenessLink::Connect(
      hosts, port, deps_.self, TokenBytes(deps_.rpc.job_token()), std::chrono::seconds(1));
  if (!link.ok()) {
    log::Warn("the standby conductor (rank {}) will see this rank's death by heartbeats only: {}",
              deps_.standby.value, link.status().ToString());
    return;
  }
  liveness_link_ = std::move(*link);
}

void StoreServiceNode::StartJournal() {
  journal_ = StartMasterJournal(deps_.rpc, deps_.standby, config_.membership, master_->service(),
                                lifecycle_, [this](const Status& why) {
                                  if (on_fenced_) on_fenced_(why);
                                });
}

void StoreServiceNode::OnRankDead(const DeadRank& dead) {
  if (dead.rank == deps_.standby) {
    log::Warn("the standby conductor (rank {}) died: the master goes on without a standby",
              dead.rank.value);
    return;
  }
  // Every other rank is a store rank here, those that joined since included.
  if (!master_) return;
  const std::vector<std::string> lost = master_->OnStoreRankDead(dead.rank);
  if (lost.empty()) return;
  log::Error(
      "store rank {} died holding the only replica of {} object(s): they are lost "
      "(summary.json objects_lost_rank_died)",
      dead.rank.value, lost.size());
}

void StoreServiceNode::OnActiveLost(const Status& why) {
  if (!MayTakeOver(lifecycle_, why, on_fenced_)) return;
  Status s = TakeOver(why);
  if (!s.ok() && on_fenced_) on_fenced_(s.WithContext("the standby's takeover failed"));
}

Status StoreServiceNode::TakeOver(const Status& why) {
  SteadyClock clock;
  Result<Takeover> begun =
      BeginTakeover(lifecycle_, deps_.rpc, deps_.self, why.message(), *standby_);
  if (!begun.ok()) return begun.status();
  Takeover& t = *begun;
  master_.emplace(master_config_, deps_.transport, deps_.rpc, deps_.topology);
  MC_RETURN_IF_ERROR(master_->Start(&t.table));
  const FailoverReport report = t.Report(clock.Now());
  lifecycle_.Promote(std::move(t.membership));
  {
    std::lock_guard<std::mutex> lock(failover_mutex_);
    failover_ = report;
    old_active_last_heard_ = t.last_heard;
  }
  log::Warn(
      "rank {} took over as the conductor (membership epoch {}): {} object(s) rebuilt from {} "
      "journal entries, serving {:.0f} ms after the last heartbeat of rank {}",
      deps_.self.value, report.epoch, report.objects_restored, report.journal_entries,
      report.ready_ms, report.old_conductor);
  if (on_promoted_) on_promoted_();
  return Status::Ok();
}

StoreServiceNode::Failover StoreServiceNode::failover() {
  std::lock_guard<std::mutex> lock(failover_mutex_);
  Failover f = failover_;
  if (f.took_over && master_) {
    const Nanos first = master_->service().first_request_at();
    if (first > Nanos(0)) f.takeover_ms = Millis(first - old_active_last_heard_);
  }
  return f;
}

}  // namespace mooncake::serve

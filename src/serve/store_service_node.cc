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
  store::JournalConfig jc;
  jc.standby = deps_.standby;
  jc.send_timeout = config_.membership.failure_timeout;
  jc.keepalive = config_.membership.heartbeat_interval;
  journal_ = std::make_unique<store::JournalSender>(deps_.rpc, jc);
  journal_->OnFenced([this](const Status& why) {
    if (on_fenced_) on_fenced_(why);
  });
  // A standby that heartbeats but does not take the journal would stall every put: fence it
  // (the sender then goes on alone), so that it can never take over with a stale table either.
  journal_->OnUnresponsive([this](const std::string& why) {
    lifecycle_.DeclareDead(deps_.standby, "the standby conductor: " + why);
  });
  master_->service().SetJournal(journal_.get());
  journal_->Start();
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
  if (lifecycle_.stop_requested()) {
    // The service is ending: its conductor left after the stop, which is no failure.
    log::Info("the conductor left after the stop: no takeover ({})", why.ToString());
    return;
  }
  if (lifecycle_.fenced_by_conductor()) {
    // The active declared this standby dead (it stopped, or stopped taking the journal): its
    // table may be stale, so it must never take over.
    if (on_fenced_) on_fenced_(why.WithContext("the standby conductor was fenced by the active"));
    return;
  }
  Status s = TakeOver(why);
  if (!s.ok() && on_fenced_) on_fenced_(s.WithContext("the standby's takeover failed"));
}

Status StoreServiceNode::TakeOver(const Status& why) {
  SteadyClock clock;
  const Nanos last = lifecycle_.last_conductor_reply();
  cluster::Membership m = lifecycle_.membership();
  const Rank old = m.conductor();
  m.Die(old, clock.Now(),
        "no heartbeat for " + FormatSeconds(clock.Now() - last) +
            " (the standby took over: " + why.message() + ")");
  MC_RETURN_IF_ERROR(m.SetConductor(deps_.self));
  const std::string fence = fmt::format("fenced by epoch {}: rank {} took over as the conductor",
                                        m.epoch(), deps_.self.value);
  // From here nothing of the old active is obeyed here: its journal sends and keepalives are
  // answered PeerFailure naming the epoch, which is how it learns to stop.
  deps_.rpc.MarkDead(old, fence);
  const uint64_t applied = standby_->entries_applied();
  const store::StandbyTable table = standby_->Promote(PeerFailure(fence));
  master_.emplace(master_config_, deps_.transport, deps_.rpc, deps_.topology);
  MC_RETURN_IF_ERROR(master_->Start(&table));
  const uint64_t epoch = m.epoch();
  lifecycle_.Promote(std::move(m));
  const Nanos ready = clock.Now();
  {
    std::lock_guard<std::mutex> lock(failover_mutex_);
    failover_.took_over = true;
    failover_.old_conductor = old.value;
    failover_.epoch = epoch;
    failover_.journal_entries = applied;
    failover_.objects_restored = table.objects();
    failover_.ready_ms = Millis(ready - last);
    old_active_last_heard_ = last;
  }
  log::Warn(
      "rank {} took over as the conductor (membership epoch {}): {} object(s) rebuilt from {} "
      "journal entries, serving {:.0f} ms after the last heartbeat of rank {}",
      deps_.self.value, epoch, table.objects(), applied, Millis(ready - last), old.value);
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

#include "serve/serve_node.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "common/log.h"
#include "common/units.h"
#include "serve/clock_sync.h"
#include "serve/messages.h"
#include "serve/serve_journal.h"

namespace mooncake::serve {

ServeNode::ServeNode(ServePart part, ServeNodeDeps deps, const ServeConfig& config,
                     const engine::CostModel& cost, const engine::KvLayout& layout,
                     ConductorSetup setup, store::StoreRankConfig store_rank)
    : part_(part),
      deps_(std::move(deps)),
      setup_(std::move(setup)),
      store_rank_config_(std::move(store_rank)),
      ctx_{deps_.transport, deps_.rpc, deps_.peers, config, cost, layout, deps_.engine},
      lifecycle_(part, deps_.transport, deps_.rpc, deps_.peers.self, InitialMembership(), config) {}

ServeNode::~ServeNode() {
  lifecycle_.Stop();
  if (master_) master_->service().SetJournal(nullptr);
  if (store_journal_) store_journal_->Stop();
  if (prefill_) prefill_->Stop();
  if (decode_) decode_->Stop();
  if (master_) master_->Stop();
}

Status ServeNode::Start() {
  lifecycle_.OnRankDead([this](const DeadRank& d) { OnRankDead(d); });
  {
    std::lock_guard<std::mutex> lock(failover_mutex_);
    failover_.standby = has_standby();
  }
  if (part_ == ServePart::kConductor && is_standby()) {
    StartStandby();
    return Status::Ok();
  }
  if (has_standby() && part_ != ServePart::kConductor) {
    lifecycle_.FollowStandby(deps_.standby);
    lifecycle_.OnConductorChanged([this](Rank c) { OnConductorChanged(c); });
  }
  lifecycle_.Start();
  if (part_ == ServePart::kConductor) {
    store::MasterNodeConfig mc = setup_.master;
    mc.copy_timeout = ctx_.config.phase_timeout;
    master_.emplace(std::move(mc), deps_.transport, deps_.rpc, deps_.topology);
    Status s = master_->Start();
    if (!s.ok()) return s;
    StartConductor();
    if (has_standby()) StartJournals();
  } else if (part_ == ServePart::kStore) {
    store_rank_.emplace(store_rank_config_, ctx_.peers.self, ctx_.peers.conductor, deps_.transport,
                        deps_.rpc, deps_.local_buffer);
    return store_rank_->Start();
  } else if (part_ == ServePart::kPrefill || part_ == ServePart::kDecode) {
    if (ctx_.engine == nullptr) {
      return InvalidArgument("rank " + std::to_string(ctx_.peers.self.value) +
                             ": a prefill or decode rank needs an engine (ServeNodeDeps::engine)");
    }
    StartClient();
  }
  return Status::Ok();
}

cluster::Membership ServeNode::InitialMembership() const {
  std::vector<cluster::Member> others;
  for (int r : ctx_.peers.prefill_ranks) others.push_back({Rank{r}, cluster::Role::kPrefill});
  for (int r : ctx_.peers.decode_ranks) others.push_back({Rank{r}, cluster::Role::kDecode});
  for (const auto& seg : deps_.topology.segments)
    others.push_back({seg.rank, cluster::Role::kStore});
  // The standby heartbeats the active like any rank (and is watched like one).
  if (deps_.standby.value >= 0) others.push_back({deps_.standby, cluster::Role::kConductor});
  return cluster::Membership(ctx_.peers.conductor, others);
}

void ServeNode::OnRankDead(const DeadRank& dead) {
  if (master_ && deps_.topology.Find(dead.rank) != nullptr) {
    // A store rank: its replicas go; objects left below their replica count are copied again
    // from the survivors; objects with none left are gone (prefills recompute those blocks).
    const std::vector<std::string> lost = master_->OnStoreRankDead(dead.rank);
    std::vector<BlockHash> gone;
    for (const std::string& key : lost) {
      if (auto id = ctx_.layout.HashOfKey(key)) gone.push_back(BlockHash{*id});
    }
    if (conductor_ && !gone.empty()) {
      conductor_->OnBlocksLost(gone);
      log::Warn("store rank {} held the only replica of {} blocks: they left the prefix index",
                dead.rank.value, gone.size());
    }
  }
  if (conductor_) conductor_->OnRankDead(dead.rank, dead.why);
}

void ServeNode::StartConductor(const ServeState* restored) {
  if (restored == nullptr) ServeClock(deps_.rpc);
  conductor::SchedulerConfig sc = setup_.scheduler;
  // In the live job, instances are ranks: the role layout decides their number.
  sc.prefill_instances = static_cast<int>(ctx_.peers.prefill_ranks.size());
  sc.decode_instances = static_cast<int>(ctx_.peers.decode_ranks.size());
  sc.colocated = false;
  scheduler_.emplace(sc, &ctx_.cost);
  static const std::vector<trace::TraceRequest> kNone;
  conductor_.emplace(ctx_, setup_.requests ? *setup_.requests : kNone, *scheduler_);
  const std::string dir = run_dir();
  if (!dir.empty()) {
    auto log = trace::RequestLog::Open(dir + "/requests.csv");
    if (log.ok()) {
      request_log_ = std::move(*log);
      conductor_->SetRequestLog(request_log_.get());
    } else {
      log::Warn("{}", log.status().ToString());
    }
    conductor_->SetPartialSummaryDir(dir);
  }
  if (restored != nullptr) conductor_->Restore(*restored);
  conductor_->Start();
}

std::string ServeNode::run_dir() const {
  if (!is_standby()) return ctx_.config.run_dir;
  std::lock_guard<std::mutex> lock(failover_mutex_);
  return restored_run_dir_;
}

void ServeNode::StartJournals() {
  store_journal_ = StartMasterJournal(deps_.rpc, deps_.standby, ctx_.config.membership,
                                      master_->service(), lifecycle_, [this](const Status& why) {
                                        if (on_fenced_) on_fenced_(why);
                                      });
  conductor_->SetJournal(
      [this](std::vector<std::byte> batch) {
        // One-way: a standby that died is declared dead and skipped (PeerFailure at once).
        (void)deps_.rpc.Notify(deps_.standby, kMsgServeJournal, batch);
      },
      ctx_.config.run_dir);
}

void ServeNode::StartStandby() {
  store_standby_.emplace(deps_.rpc, ctx_.peers.conductor, deps_.topology);
  store_standby_->Start();
  follower_.emplace(deps_.rpc, ctx_.peers.conductor);
  follower_->Start();
  lifecycle_.OnConductorLost([this](const Status& why) { OnActiveLost(why); });
  lifecycle_.Start();
}

void ServeNode::OnActiveLost(const Status& why) {
  if (!MayTakeOver(lifecycle_, why, on_fenced_)) return;
  Status s = TakeOver();
  if (!s.ok() && on_fenced_) on_fenced_(s.WithContext("the standby's takeover failed"));
}

Status ServeNode::TakeOver() {
  SteadyClock clock;
  Result<Takeover> begun =
      BeginTakeover(lifecycle_, deps_.rpc, ctx_.peers.self, "", *store_standby_);
  if (!begun.ok()) return begun.status();
  Takeover& t = *begun;
  const store::StandbyTable& table = t.table;
  const ServeState state = follower_->Promote();
  {
    std::lock_guard<std::mutex> lock(failover_mutex_);
    restored_run_dir_ = state.run_dir;
  }
  store::MasterNodeConfig mc = setup_.master;
  mc.copy_timeout = ctx_.config.phase_timeout;
  master_.emplace(std::move(mc), deps_.transport, deps_.rpc, deps_.topology);
  MC_RETURN_IF_ERROR(master_->Start(&table));
  StartConductor(&state);
  // The prefix index starts from what the store holds (the old one's was not journaled).
  IndexRecoveredBlocks(*scheduler_, table.keys(), ctx_.layout.model_name(),
                       static_cast<int>(ctx_.peers.prefill_ranks.size()));
  std::vector<Rank> dead;
  for (const DeadRank& d : t.membership.dead()) dead.push_back(d.rank);
  // Ready before it conducts: from Promote on, the replay (another thread) may decide.
  FailoverReport report = t.Report(clock.Now());
  lifecycle_.Promote(std::move(t.membership));  // watches every live rank and tells them
  report.serving = true;
  report.serve_batches = state.batches;
  report.requests_restored = state.requests.size();
  report.requests_redispatched = conductor_->ResolveInFlight(dead);
  {
    std::lock_guard<std::mutex> lock(failover_mutex_);
    failover_ = report;
    old_active_last_heard_ = t.last_heard;
  }
  log::Warn(
      "rank {} took over as the conductor (membership epoch {}): {} store object(s) from {} "
      "journal entries, {} request(s) from {} serving batches ({} re-dispatched), replay from "
      "request {}, conducting {:.0f} ms after the last heartbeat of rank {}",
      ctx_.peers.self.value, report.epoch, report.objects_restored, report.journal_entries,
      report.requests_restored, report.serve_batches, report.requests_redispatched,
      state.replay_next, report.ready_ms, report.old_conductor);
  return Status::Ok();
}

ServeNode::Failover ServeNode::failover() const {
  std::lock_guard<std::mutex> lock(failover_mutex_);
  Failover f = failover_;
  if (f.took_over && conductor_) {
    const Nanos first = conductor_->first_decision_at();
    if (first > Nanos(0))
      f.takeover_ms = static_cast<double>((first - old_active_last_heard_).count()) / 1e6;
  }
  return f;
}

void ServeNode::OnConductorChanged(Rank conductor) {
  log::Warn("rank {}: the conductor is rank {} now", ctx_.peers.self.value, conductor.value);
  if (client_) client_->SetMaster(conductor);
  if (link_) link_->SwitchTo(conductor);
}

void ServeNode::StartClient() {
  store::StoreClientConfig cc;
  cc.timeout = ctx_.config.phase_timeout;
  client_.emplace(deps_.transport, deps_.rpc, ctx_.peers.conductor, deps_.topology, cc);
  ctx_.store = &*client_;
  // Reports are kept for a takeover's length: the standby notices after the failure timeout,
  // the ranks follow its view a moment later.
  const Nanos ft = ctx_.config.membership.failure_timeout;
  link_.emplace(deps_.rpc, ConductorLinkConfig{ctx_.peers.conductor, has_standby(),
                                               3 * ft + ctx_.config.rpc_timeout,
                                               3 * ft + ctx_.config.rpc_timeout});
  ctx_.link = &*link_;
  if (part_ == ServePart::kPrefill) {
    prefill_.emplace(ctx_);
    prefill_->Start();
  } else {
    decode_.emplace(ctx_, deps_.local_buffer);
    decode_->Start();
  }
}

Status ServeNode::SyncClock() {
  // A standby conductor keeps the active's clock: the replay it may take over runs on it.
  if (part_ != ServePart::kPrefill && part_ != ServePart::kDecode && !is_standby()) {
    return Status::Ok();
  }
  auto offset = serve::SyncClock(deps_.rpc, ctx_.peers.conductor, 8, ctx_.config.rpc_timeout);
  if (!offset.ok()) return offset.status();
  ctx_.clock_offset = *offset;
  return Status::Ok();
}

void ServeNode::RunConductor() { conductor_->Run(); }

RankReport ServeNode::Finish() {
  RankReport report = lifecycle_.Finish();
  if (prefill_) {
    prefill_->Stop();
    PrefillStats ps = prefill_->stats();
    report.errors += ps.errors;
    report.store_put_failures = ps.store_put_failures;
    report.peer_loss_aborts += ps.peer_loss_aborts;
    report.prefill_staging_high_water = ps.staging_high_water_bytes;
    report.prefill_staging_retired = ps.staging_retired_bytes;
    if (report.first_error.empty()) report.first_error = ps.first_error;
  }
  if (decode_) {
    decode_->Stop();
    DecodeStats ds = decode_->stats();
    report.errors += ds.errors;
    report.peer_loss_aborts += ds.peer_loss_aborts;
    report.blocks_verified = ds.blocks_verified;
    report.blocks_corrupt = ds.blocks_corrupt;
    report.tokens = ds.tokens;
    report.max_batch = ds.max_batch;
    report.decode_waiting_high_water = ds.waiting_high_water;
    if (report.first_error.empty()) report.first_error = ds.first_error;
  }
  return report;
}

size_t IndexRecoveredBlocks(conductor::Scheduler& scheduler, const std::vector<std::string>& keys,
                            const std::string& model_name, int prefill_instances) {
  if (prefill_instances <= 0) return 0;
  const std::string prefix = model_name + "/";
  std::vector<std::vector<BlockHash>> by_instance(prefill_instances);
  for (const std::string& key : keys) {
    if (key.rfind(prefix, 0) != 0) continue;  // another model's blocks
    char* end = nullptr;
    const uint64_t hash = std::strtoull(key.c_str() + prefix.size(), &end, 10);
    if (end == key.c_str() + prefix.size() || *end != '\0') continue;
    by_instance[hash % prefill_instances].push_back(BlockHash{hash});
  }
  size_t indexed = 0;
  for (int i = 0; i < prefill_instances; ++i) {
    scheduler.OnBlocksStored(i, by_instance[i], Nanos(0));
    indexed += by_instance[i].size();
  }
  return indexed;
}

}  // namespace mooncake::serve

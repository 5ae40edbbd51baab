#include "serve/serve_node.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "common/log.h"
#include "serve/clock_sync.h"
#include "serve/messages.h"

namespace mooncake::serve {

ServeNode::ServeNode(ServePart part, ServeNodeDeps deps, const ServeConfig& config,
                     const engine::CostModel& cost, const engine::KvLayout& layout,
                     ConductorSetup setup, store::StoreRankConfig store_rank)
    : part_(part),
      deps_(std::move(deps)),
      setup_(std::move(setup)),
      store_rank_config_(std::move(store_rank)),
      ctx_{deps_.transport, deps_.rpc, deps_.peers, config, cost, layout, deps_.engine} {}

ServeNode::~ServeNode() {
  if (detector_) deps_.transport.SetPeerFailureHandler(nullptr);
  if (heartbeats_) heartbeats_->Stop();
  if (detector_) detector_->Stop();
  if (prefill_) prefill_->Stop();
  if (decode_) decode_->Stop();
  if (master_) master_->Stop();
}

Status ServeNode::Start() {
  deps_.rpc.Register(kMsgStop, [this](Rank, std::span<const std::byte>, transport::Responder r) {
    r.Reply({});
    stop_ = true;
  });
  deps_.rpc.Register(kMsgShutdown,
                     [this](Rank, std::span<const std::byte> bytes, transport::Responder r) {
                       auto view = MembershipView::Decode(bytes);
                       if (view.ok()) {
                         for (int32_t d : view->dead) {
                           deps_.rpc.MarkDead(Rank{d}, "declared dead by the conductor");
                         }
                       }
                       r.Reply({});
                       shutdown_ = true;
                     });
  StartMembership();
  if (part_ == ServePart::kConductor) {
    store::MasterNodeConfig mc = setup_.master;
    mc.copy_timeout = ctx_.config.phase_timeout;
    master_.emplace(std::move(mc), deps_.transport, deps_.rpc, deps_.topology);
    Status s = master_->Start();
    if (!s.ok()) return s;
    if (!setup_.store_service) StartConductor();
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

std::vector<int> ServeNode::OtherRanks() const {
  std::vector<int> ranks;
  for (const auto& group : {ctx_.peers.prefill_ranks, ctx_.peers.decode_ranks}) {
    ranks.insert(ranks.end(), group.begin(), group.end());
  }
  for (const auto& seg : deps_.topology.segments) ranks.push_back(seg.rank.value);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  ranks.erase(std::remove(ranks.begin(), ranks.end(), ctx_.peers.self.value), ranks.end());
  return ranks;
}

void ServeNode::StartMembership() {
  const MembershipConfig& mc = ctx_.config.membership;
  if (part_ != ServePart::kConductor) {
    heartbeats_ = std::make_unique<HeartbeatSender>(deps_.rpc, ctx_.peers.conductor, mc);
    heartbeats_->OnConductorLost(on_lost_);
    heartbeats_->Start();
    return;
  }
  detector_ = std::make_unique<FailureDetector>(deps_.rpc, OtherRanks(), mc);
  detector_->OnDeath([this](const DeadRank& d) { OnRankDead(d); });
  // A tcp or rdma endpoint that reports its peer gone: dead now, not after missed heartbeats.
  deps_.transport.SetPeerFailureHandler([this](Rank peer, const std::string& why) {
    // Processes attached from outside the job (store clients) come and go; they are not ranks.
    if (peer.value >= deps_.transport.world_size()) return;
    if (detector_) detector_->DeclareDead(peer, why);
  });
  deps_.rpc.Register(
      kMsgReport, [this](Rank from, std::span<const std::byte> bytes, transport::Responder r) {
        auto report = RankReport::Decode(bytes);
        if (!report.ok()) {
          report = RankReport{};
          report->AddError("malformed report from rank " + std::to_string(from.value));
        }
        r.Reply({});
        std::lock_guard<std::mutex> lock(reports_mutex_);
        reports_[from.value] = std::move(*report);
        reports_cv_.notify_all();
      });
  detector_->Start();
}

void ServeNode::OnRankDead(const DeadRank& dead) {
  if (master_ && deps_.topology.Find(dead.rank) != nullptr) {
    // A store rank: its replicas go; objects left below their replica count are copied again
    // from the survivors; objects with none left are gone (prefills recompute those blocks).
    const std::vector<std::string> lost = master_->OnStoreRankDead(dead.rank);
    if (!lost.empty() && !conductor_) {  // the store service (a serving job recomputes them)
      log::Error(
          "store rank {} died holding the only replica of {} object(s): they are lost "
          "(summary.json objects_lost_rank_died)",
          dead.rank.value, lost.size());
    }
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
  reports_cv_.notify_all();  // CollectReports stops waiting for it
}

std::vector<DeadRank> ServeNode::dead_ranks() const {
  return detector_ ? detector_->dead() : std::vector<DeadRank>{};
}

bool ServeNode::peers_lost() const {
  if (detector_) return !detector_->dead().empty();
  return heartbeats_ && heartbeats_->epoch() > 0;
}

void ServeNode::StartConductor() {
  ServeClock(deps_.rpc);
  conductor::SchedulerConfig sc = setup_.scheduler;
  // In the live job, instances are ranks: the role layout decides their number.
  sc.prefill_instances = static_cast<int>(ctx_.peers.prefill_ranks.size());
  sc.decode_instances = static_cast<int>(ctx_.peers.decode_ranks.size());
  sc.colocated = false;
  scheduler_.emplace(sc, &ctx_.cost);
  static const std::vector<trace::TraceRequest> kNone;
  conductor_.emplace(ctx_, setup_.requests ? *setup_.requests : kNone, *scheduler_);
  if (!ctx_.config.run_dir.empty()) {
    auto log = trace::RequestLog::Open(ctx_.config.run_dir + "/requests.csv");
    if (log.ok()) {
      request_log_ = std::move(*log);
      conductor_->SetRequestLog(request_log_.get());
    } else {
      log::Warn("{}", log.status().ToString());
    }
    conductor_->SetPartialSummaryDir(ctx_.config.run_dir);
  }
  conductor_->Start();
}

void ServeNode::StartClient() {
  store::StoreClientConfig cc;
  cc.timeout = ctx_.config.phase_timeout;
  client_.emplace(deps_.transport, deps_.rpc, ctx_.peers.conductor, deps_.topology, cc);
  ctx_.store = &*client_;
  if (part_ == ServePart::kPrefill) {
    prefill_.emplace(ctx_);
    prefill_->Start();
  } else {
    decode_.emplace(ctx_, deps_.local_buffer);
    decode_->Start();
  }
}

Status ServeNode::SyncClock() {
  if (part_ != ServePart::kPrefill && part_ != ServePart::kDecode) return Status::Ok();
  auto offset = serve::SyncClock(deps_.rpc, ctx_.peers.conductor, 8, ctx_.config.rpc_timeout);
  if (!offset.ok()) return offset.status();
  ctx_.clock_offset = *offset;
  return Status::Ok();
}

void ServeNode::RunConductor() { conductor_->Run(); }

void ServeNode::StopOthers() {
  for (int p : OtherRanks()) {
    if (deps_.rpc.IsDead(Rank{p})) continue;
    auto r = deps_.rpc.Call(Rank{p}, kMsgStop, {}, ctx_.config.rpc_timeout);
    if (!r.ok() && r.status().code() != ErrorCode::kPeerFailure) {
      report_.AddError(r.status().ToString());
    }
  }
}

Status ServeNode::SendReport(const RankReport& report) {
  auto r =
      deps_.rpc.Call(ctx_.peers.conductor, kMsgReport, report.Encode(), ctx_.config.phase_timeout);
  return r.ok() ? Status::Ok() : r.status();
}

RankReport ServeNode::CollectReports(const RankReport& own) {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + ctx_.config.phase_timeout;
  const std::vector<int> others = OtherRanks();
  RankReport all = own;
  std::unique_lock<std::mutex> lock(reports_mutex_);
  for (;;) {
    std::vector<int> missing;
    for (int p : others) {
      if (!reports_.count(p) && !deps_.rpc.IsDead(Rank{p})) missing.push_back(p);
    }
    if (missing.empty()) break;
    if (clock.Now() >= deadline) {
      for (int p : missing) all.AddError("no report from rank " + std::to_string(p));
      break;
    }
    reports_cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  for (const auto& [rank, report] : reports_) all.Add(report);
  return all;
}

void ServeNode::ShutdownOthers() {
  // From here the others leave on purpose: their closing endpoints are not failures.
  deps_.transport.SetPeerFailureHandler(nullptr);
  MembershipView view;
  if (detector_) {
    view.epoch = detector_->epoch();
    for (const auto& d : detector_->dead()) view.dead.push_back(d.rank.value);
  }
  const auto bytes = view.Encode();
  for (int p : OtherRanks()) {
    if (deps_.rpc.IsDead(Rank{p})) continue;
    auto r = deps_.rpc.Call(Rank{p}, kMsgShutdown, bytes, ctx_.config.rpc_timeout);
    if (!r.ok()) log::Warn("shutdown of rank {}: {}", p, r.status().ToString());
  }
}

void ServeNode::WaitForShutdown() {
  const Nanos deadline = clock_.Now() + ctx_.config.phase_timeout;
  while (!shutdown_ && clock_.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!shutdown_) log::Warn("no shutdown message from the conductor");
  if (heartbeats_) heartbeats_->Stop();
}

void ServeNode::WaitForStop() {
  const Nanos deadline = clock_.Now() + ctx_.config.job_deadline + ctx_.config.phase_timeout;
  while (!stop_ && clock_.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!stop_) report_.AddError("no stop message from the conductor");
}

RankReport ServeNode::Finish() {
  // Frames refused for a wrong or missing job token (transport/rpc.h), up to now.
  report_.rpc_refused_frames = deps_.rpc.refused_frames();
  report_.SetRefusals(deps_.transport.refused_data_messages_by_peer());
  // This process's peak resident set so far (benchmarks/overload.sh holds it to a bound).
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  report_.peak_rss_bytes.assign(RankReport::kServeParts, 0);
  report_.peak_rss_bytes[static_cast<size_t>(part_)] =
      static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  if (prefill_) {
    prefill_->Stop();
    PrefillStats ps = prefill_->stats();
    report_.errors += ps.errors;
    report_.store_put_failures = ps.store_put_failures;
    report_.peer_loss_aborts += ps.peer_loss_aborts;
    report_.prefill_staging_high_water = ps.staging_high_water_bytes;
    report_.prefill_staging_retired = ps.staging_retired_bytes;
    if (report_.first_error.empty()) report_.first_error = ps.first_error;
  }
  if (decode_) {
    decode_->Stop();
    DecodeStats ds = decode_->stats();
    report_.errors += ds.errors;
    report_.peer_loss_aborts += ds.peer_loss_aborts;
    report_.blocks_verified = ds.blocks_verified;
    report_.blocks_corrupt = ds.blocks_corrupt;
    report_.tokens = ds.tokens;
    report_.max_batch = ds.max_batch;
    report_.decode_waiting_high_water = ds.waiting_high_water;
    if (report_.first_error.empty()) report_.first_error = ds.first_error;
  }
  return report_;
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

#include "serve/serve_node.h"

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
      ctx_{deps_.transport, deps_.rpc, deps_.peers, config, cost, layout, deps_.engine},
      lifecycle_(part, deps_.transport, deps_.rpc, deps_.peers.self, InitialMembership(), config) {}

ServeNode::~ServeNode() {
  lifecycle_.Stop();
  if (prefill_) prefill_->Stop();
  if (decode_) decode_->Stop();
  if (master_) master_->Stop();
}

Status ServeNode::Start() {
  lifecycle_.OnRankDead([this](const DeadRank& d) { OnRankDead(d); });
  lifecycle_.Start();
  if (part_ == ServePart::kConductor) {
    store::MasterNodeConfig mc = setup_.master;
    mc.copy_timeout = ctx_.config.phase_timeout;
    master_.emplace(std::move(mc), deps_.transport, deps_.rpc, deps_.topology);
    Status s = master_->Start();
    if (!s.ok()) return s;
    StartConductor();
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

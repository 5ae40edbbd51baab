#include "serve/serve_node.h"

#include <cstdlib>
#include <thread>

#include "common/log.h"
#include "serve/clock_sync.h"
#include "serve/messages.h"

namespace mooncake::serve {

ServeNode::ServeNode(ServePart part, ServeNodeDeps deps, const ServeConfig& config,
                     const engine::CostModel& cost, const KvLayout& layout, ConductorSetup setup)
    : part_(part), deps_(std::move(deps)), setup_(std::move(setup)), ctx_{deps_.transport,
                                                                          deps_.rpc,
                                                                          deps_.peers,
                                                                          config,
                                                                          cost,
                                                                          layout} {}

ServeNode::~ServeNode() {
  if (prefill_) prefill_->Stop();
  if (decode_) decode_->Stop();
  if (master_) master_->Stop();
}

Status ServeNode::Start() {
  deps_.rpc.Register(kMsgStop, [this](Rank, std::span<const std::byte>, transport::Responder r) {
    r.Reply({});
    stop_ = true;
  });
  if (part_ == ServePart::kConductor) {
    store::MasterServiceConfig mc = setup_.master;
    master_.emplace(mc, deps_.rpc, clock_);
    Status s = master_->AddSegments(deps_.topology);
    if (!s.ok()) return s;
    master_->Start();
    StartConductor();
  } else if (part_ == ServePart::kPrefill || part_ == ServePart::kDecode) {
    StartClient();
  }
  return Status::Ok();
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
  // Every rank but this one: the conductor tells each to finish.
  std::vector<int> ranks;
  for (const auto& group : {ctx_.peers.prefill_ranks, ctx_.peers.decode_ranks}) {
    ranks.insert(ranks.end(), group.begin(), group.end());
  }
  for (const auto& seg : deps_.topology.segments) ranks.push_back(seg.rank.value);
  for (int p : ranks) {
    if (p == ctx_.peers.self.value) continue;
    auto r = deps_.rpc.Call(Rank{p}, kMsgStop, {}, ctx_.config.rpc_timeout);
    if (!r.ok()) report_.AddError(r.status().ToString());
  }
}

void ServeNode::WaitForStop() {
  const Nanos deadline = clock_.Now() + ctx_.config.job_deadline + ctx_.config.phase_timeout;
  while (!stop_ && clock_.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!stop_) report_.AddError("no stop message from the conductor");
}

RankReport ServeNode::Finish() {
  if (prefill_) {
    prefill_->Stop();
    PrefillStats ps = prefill_->stats();
    report_.errors += ps.errors;
    report_.store_put_failures = ps.store_put_failures;
    if (report_.first_error.empty()) report_.first_error = ps.first_error;
  }
  if (decode_) {
    decode_->Stop();
    DecodeStats ds = decode_->stats();
    report_.errors += ds.errors;
    report_.blocks_verified = ds.blocks_verified;
    report_.blocks_corrupt = ds.blocks_corrupt;
    report_.tokens = ds.tokens;
    report_.max_batch = ds.max_batch;
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

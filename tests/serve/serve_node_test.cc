// The serving path in one process: a conductor (with the store's metadata master), a store, a
// prefill and a decode rank over the loopback transport replay a synthetic workload with real
// (scaled) KV bytes. No MPI, no UCX: the roles run on their narrow dependencies alone.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "engine/cost_model_engine.h"
#include "engine/reference_engine.h"
#include "model/checkpoint.h"
#include "serve/serve_node.h"
#include "serve/token_check.h"
#include "serve/workload.h"
#include "support/paper_cost_model.h"
#include "transport/forwarding_transport.h"
#include "transport/loopback/loopback_transport.h"
#include "transport/rpc.h"

namespace mooncake::serve {
namespace {

constexpr int kConductor = 0, kStore = 1, kPrefill = 2, kDecode = 3, kRanks = 4;

struct FreeBytes {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeBytes>;

Buffer Allocate(size_t bytes) {
  return Buffer(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
}

// The roles compute only through the engine seam: CostModelEngine's behaviour, with every call
// counted (atomics: the prefill and the decode rank share it from their own threads).
class CountingEngine final : public engine::Engine {
 public:
  explicit CountingEngine(engine::Engine& inner) : inner_(inner) {}
  uint64_t block_bytes() const override { return inner_.block_bytes(); }
  std::unique_ptr<engine::KvMemory> AllocateKv(uint64_t bytes) override {
    allocated_bytes += bytes;
    return inner_.AllocateKv(bytes);
  }
  bool models_time() const override { return inner_.models_time(); }
  engine::PrefillResult Prefill(const engine::PrefillChunk& chunk) override {
    prefill_blocks += static_cast<uint64_t>(chunk.end_block - chunk.first_block);
    return inner_.Prefill(chunk);
  }
  engine::DecodeStep Decode(std::span<const engine::DecodeSeq> batch) override {
    decode_tokens += batch.size();
    return inner_.Decode(batch);
  }
  std::atomic<uint64_t> allocated_bytes{0}, prefill_blocks{0}, decode_tokens{0};

 private:
  engine::Engine& inner_;
};

// Four loopback ranks with the store's segment and the decode rank's receive buffer registered
// and imported everywhere, as the live job's bootstrap does. With `model`, the prefill and the
// decode rank compute with the reference engine (each its own), KV blocks at their real size.
// Wraps a rank's transport (a test's late answers); returns null to leave it as it is.
using WrapTransport =
    std::function<std::unique_ptr<transport::Transport>(int rank, transport::Transport& inner)>;

class InProcessJob {
 public:
  InProcessJob(const ServeConfig& config, const std::vector<trace::TraceRequest>& requests,
               const model::Transformer* model = nullptr, const WrapTransport& wrap = nullptr)
      : cost_(testing::Llama70bA800()),
        layout_(model == nullptr ? engine::KvLayout(cost_, 1.0 / 8192, "llama3-70b")
                                 : engine::KvLayout::Computed(
                                       model->KvShapeFor(trace::kTraceBlockTokens).BlockBytes(),
                                       model->config().num_layers, "ref-" + model->config().name)),
        engine_(cost_, layout_),
        counting_(engine_) {
    if (model != nullptr) {
      prefill_ref_ = std::make_unique<engine::ReferenceEngine>(*model);
      decode_ref_ = std::make_unique<engine::ReferenceEngine>(*model);
    }
    transports_ = transport::CreateLoopbackCluster(kRanks, &hub_);
    for (int r = 0; r < kRanks && wrap; ++r) {
      if (auto wrapped = wrap(r, *transports_[r])) {
        unwrapped_.push_back(std::move(transports_[r]));
        transports_[r] = std::move(wrapped);
      }
    }
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    std::vector<std::vector<transport::RemoteDescriptor>> regions(kRanks);
    Register(kStore, kSegmentBytes, &segment_, &regions);
    Register(kDecode, kReceiveBytes, &receive_, &regions);
    for (int r = 0; r < kRanks; ++r) {
      for (int p = 0; p < kRanks; ++p) {
        for (const auto& d : regions[p]) EXPECT_TRUE(transports_[r]->Import(Rank{p}, d).ok());
      }
    }
    auto topology = store::StoreTopology::FromRegions({kStore}, regions);
    EXPECT_TRUE(topology.ok());
    ServePeers peers{Rank{0}, Rank{kConductor}, {kPrefill}, {kDecode}};
    const ServePart parts[] = {ServePart::kConductor, ServePart::kStore, ServePart::kPrefill,
                               ServePart::kDecode};
    ConductorSetup setup;
    setup.requests = &requests;
    setup.master.service.tick_interval = std::chrono::milliseconds(5);
    for (int r = 0; r < kRanks; ++r) {
      peers.self = Rank{r};
      std::span<std::byte> local;
      if (r == kDecode) local = std::span<std::byte>(receive_.get(), kReceiveBytes);
      engine::Engine* engine = &counting_;
      if (prefill_ref_ && r == kPrefill) engine = prefill_ref_.get();
      if (decode_ref_ && r == kDecode) engine = decode_ref_.get();
      nodes_.push_back(std::make_unique<ServeNode>(
          parts[r], ServeNodeDeps{*transports_[r], *rpcs_[r], peers, *topology, local, engine},
          config, cost_, layout_, r == kConductor ? setup : ConductorSetup{}));
    }
  }
  ~InProcessJob() {
    nodes_.clear();
    for (auto& r : rpcs_) r->Stop();
  }

  ServeNode& node(int rank) { return *nodes_[rank]; }
  const engine::KvLayout& layout() const { return layout_; }
  const CountingEngine& engine() const { return counting_; }

  // The whole job: start every rank, replay on the conductor, stop, collect the reports over
  // the RPC, shut down. Returns every rank's report, and the conductor's sum in `*all`.
  std::vector<RankReport> Run(RankReport* all) {
    for (auto& n : nodes_) EXPECT_TRUE(n->Start().ok());
    for (auto& n : nodes_) EXPECT_TRUE(n->SyncClock().ok());
    std::vector<RankReport> reports(kRanks);
    std::vector<std::thread> members;
    for (int r = 1; r < kRanks; ++r) {
      members.emplace_back([this, r, &reports] {
        nodes_[r]->WaitForStop();
        reports[r] = nodes_[r]->Finish();
        EXPECT_TRUE(nodes_[r]->SendReport(reports[r]).ok());
        nodes_[r]->WaitForShutdown();
      });
    }
    nodes_[kConductor]->RunConductor();
    nodes_[kConductor]->StopOthers();
    reports[kConductor] = nodes_[kConductor]->Finish();
    *all = nodes_[kConductor]->CollectReports(reports[kConductor]);
    nodes_[kConductor]->ShutdownOthers();
    for (auto& t : members) t.join();
    return reports;
  }

 private:
  static constexpr size_t kSegmentBytes = 64 << 20, kReceiveBytes = 32 << 20;
  void Register(int rank, size_t bytes, Buffer* buffer,
                std::vector<std::vector<transport::RemoteDescriptor>>* regions) {
    *buffer = Allocate(bytes);
    // Bytes no KV has: a write left out is never masked by an earlier job's KV in reused memory.
    std::memset(buffer->get(), 0xa5, bytes);
    auto region =
        transports_[rank]->RegisterMemory(buffer->get(), bytes, transport::MemoryType::kHost);
    ASSERT_TRUE(region.ok());
    (*regions)[rank].push_back(*transports_[rank]->Export(*region));
  }

  engine::CostModel cost_;
  engine::KvLayout layout_;
  engine::CostModelEngine engine_;  // stateless, so the prefill and the decode rank share it
  CountingEngine counting_;
  std::unique_ptr<engine::ReferenceEngine> prefill_ref_, decode_ref_;
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> unwrapped_;  // under a wrapped rank's
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  Buffer segment_, receive_;
  std::vector<std::unique_ptr<ServeNode>> nodes_;
};

ServeConfig FastConfig() {
  ServeConfig c;
  c.time_scale = 20;
  c.thresholds.ttft_s = 30;
  c.thresholds.tbt_s = {0.1, 0.2, 0.3};
  c.rpc_timeout = std::chrono::seconds(5);
  c.phase_timeout = std::chrono::seconds(20);
  c.job_deadline = std::chrono::seconds(60);
  c.progress_interval = std::chrono::seconds(600);
  // These jobs check requests and bytes, not failure detection: a delivery thread descheduled
  // for a second beside other tests must not be a death (docs/RELIABILITY.md).
  c.membership.failure_timeout = std::chrono::seconds(10);
  return c;
}

std::vector<trace::TraceRequest> Synthetic(int requests) {
  WorkloadSpec spec;
  spec.synthetic.num_requests = requests;
  spec.synthetic.rate_per_s = 4;
  auto w = LoadWorkload(spec);
  EXPECT_TRUE(w.ok());
  return w.ok() ? w->requests : std::vector<trace::TraceRequest>{};
}

TEST(ServeNode, TwentySyntheticRequestsEveryBlockVerifiedInOneProcess) {
  const auto requests = Synthetic(20);
  ASSERT_EQ(requests.size(), 20u);
  const ServeConfig config = FastConfig();
  InProcessJob job(config, requests);
  RankReport all;
  std::vector<RankReport> reports = job.Run(&all);

  EXPECT_EQ(all.errors, 0u) << all.first_error;
  EXPECT_EQ(all.blocks_corrupt, 0u);
  ConductorRole& conductor = *job.node(kConductor).conductor_role();
  EXPECT_TRUE(conductor.LostRequests().empty());
  EXPECT_FALSE(job.node(kConductor).peers_lost());
  // The reports came over the RPC: the conductor's sum holds the decode rank's counters.
  EXPECT_EQ(all.blocks_verified, reports[kDecode].blocks_verified);
  const ConductorTotals totals = conductor.totals();
  uint64_t completed = 0, blocks_of_completed = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const trace::RequestRecord& r = conductor.records()[i];
    EXPECT_NE(r.outcome, trace::Outcome::kLost) << "request " << i;
    if (r.outcome != trace::Outcome::kCompleted) continue;
    ++completed;
    blocks_of_completed += requests[i].hash_ids.size();
    EXPECT_GT(r.ttft_s, 0.0) << "request " << i;
  }
  EXPECT_GT(completed, 0u);
  // Every block of every request that reached decode was verified there, none corrupt; the
  // decode rank's own count agrees with what it reported to the conductor.
  EXPECT_EQ(totals.blocks_verified, blocks_of_completed);
  EXPECT_EQ(reports[kDecode].blocks_verified, totals.blocks_verified);
  EXPECT_EQ(totals.blocks_corrupt, 0u);
  // Shared system prompts: later requests read their prefix from the store, verified.
  EXPECT_GT(totals.blocks_loaded, 0u);
  EXPECT_EQ(totals.bytes_to_decode, blocks_of_completed * job.layout().block_bytes());
}

// The prefill and decode ranks compute through the engine they are given: every computed block
// was written by Engine::Prefill into staging from Engine::AllocateKv, and every decoded token
// came from an Engine::Decode step.
TEST(ServeNode, PrefillAndDecodeRanksComputeThroughTheirEngine) {
  const auto requests = Synthetic(20);
  const ServeConfig config = FastConfig();  // the nodes keep a reference
  InProcessJob job(config, requests);
  RankReport all;
  std::vector<RankReport> reports = job.Run(&all);
  EXPECT_EQ(all.errors, 0u) << all.first_error;
  const ConductorTotals totals = job.node(kConductor).conductor_role()->totals();
  const uint64_t computed = totals.bytes_stored / job.layout().block_bytes();
  EXPECT_GT(computed, 0u);
  EXPECT_EQ(job.engine().prefill_blocks.load(), computed);
  EXPECT_GE(job.engine().allocated_bytes.load(),
            (computed + totals.blocks_loaded) * job.layout().block_bytes());
  EXPECT_GT(reports[kDecode].tokens, 0u);
  EXPECT_EQ(job.engine().decode_tokens.load(), reports[kDecode].tokens);
}

model::Transformer Tiny() {
  auto m = model::LoadModel("tiny", 0);
  EXPECT_TRUE(m.ok());
  auto t = model::Transformer::Create(std::move(*m));
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

// Synthetic requests for the reference engine: 2-block system prompts shared by several, about
// 500 new tokens a turn, at most 3000 tokens, 4 output tokens each.
std::vector<trace::TraceRequest> ShortSynthetic(int requests) {
  WorkloadSpec spec;
  spec.synthetic.num_requests = requests;
  spec.synthetic.rate_per_s = 20;
  spec.synthetic.system_prompts = 2;
  spec.synthetic.system_prompt_blocks = 2;
  spec.synthetic.mean_new_tokens = 500;
  spec.synthetic.max_input_tokens = 3000;
  auto w = LoadWorkload(spec);
  EXPECT_TRUE(w.ok());
  std::vector<trace::TraceRequest> out = w.ok() ? w->requests : std::vector<trace::TraceRequest>{};
  for (trace::TraceRequest& r : out) r.output_length = 4;
  return out;
}

// The reference engine with each layer of a chunk's finished blocks streamed to the decode rank
// as it is computed: every block verified, and every request's tokens those of one process.
// With one layer's write left out for a request, its blocks fail their checksums at the decode
// rank, which does not start it: the request does not complete, the others still do.
TEST(ServeNode, LayerByLayerKvGivesOneProcesssTokensAndAMissingLayerIsRefused) {
  const model::Transformer tiny = Tiny();
  const auto requests = ShortSynthetic(6);
  ASSERT_EQ(requests.size(), 6u);
  ServeConfig config = FastConfig();
  config.time_scale = 1;
  config.chunk_tokens = 384;  // chunks that finish no block, one, or two
  for (int skip : {-1, 1}) {
    SCOPED_TRACE(skip < 0 ? "every layer streamed" : "layer 1 of one request left out");
    config.fault_skip_kv_layer = skip;
    InProcessJob job(config, requests, &tiny);
    RankReport all;
    std::vector<RankReport> reports = job.Run(&all);
    ConductorRole& conductor = *job.node(kConductor).conductor_role();
    ReferenceTokens reference(tiny, requests);
    const TokenCheckResult check = reference.Compare(conductor.records(), conductor.output_ids());
    EXPECT_EQ(check.token_mismatches, 0u) << check.first_mismatch;
    size_t completed = 0;
    for (const trace::RequestRecord& r : conductor.records()) {
      completed += r.outcome == trace::Outcome::kCompleted;
    }
    if (skip < 0) {
      EXPECT_EQ(all.errors, 0u) << all.first_error;
      EXPECT_EQ(reports[kDecode].blocks_corrupt, 0u);
      EXPECT_GT(reports[kDecode].blocks_verified, 0u);
      EXPECT_EQ(completed, requests.size());
      EXPECT_EQ(check.requests_compared, requests.size());
    } else {
      EXPECT_GT(reports[kDecode].blocks_corrupt, 0u);
      EXPECT_EQ(completed, requests.size() - 1);
      EXPECT_EQ(check.requests_compared, requests.size() - 1);
    }
  }
}

// Sends the first `count` answers to RPC `type` `late`: a rank whose handling stalls past its
// callers' rpc_timeout (a loaded machine, a lock held over a slow disk write).
class LateAnswers final : public transport::ForwardingTransport {
 public:
  LateAnswers(transport::Transport& inner, uint16_t type, int count, Nanos late)
      : ForwardingTransport(inner), type_(type), left_(count), late_(late) {}
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override {
    auto frame = transport::DecodeFrame(payload);
    if (frame.ok() && frame->kind == transport::FrameKind::kResponse && frame->type == type_ &&
        left_.fetch_sub(1) > 0) {
      std::this_thread::sleep_for(late_);
    }
    return inner_.SendMessage(peer, payload);
  }

 private:
  const uint16_t type_;
  std::atomic<int> left_;
  const Nanos late_;
};

// The decode rank answers a KV offer, and the conductor a KvArrived, after the caller's
// rpc_timeout: each is asked again and answers the same (the same slot, the same admission),
// so every request completes. Given up after one timeout, the request waited for the job
// deadline and was lost (a live_vs_sim run in CI hung so).
TEST(ServeNode, AnAnswerLaterThanTheRpcTimeoutIsAskedAgainAndNoRequestIsLost) {
  const auto requests = Synthetic(8);
  ServeConfig config = FastConfig();
  // Every call of the job has this timeout, the clock syncs and the stops too, so it leaves a
  // loaded machine room; only the two answers below are late past it.
  config.rpc_timeout = std::chrono::milliseconds(1000);
  config.job_deadline = std::chrono::seconds(60);
  const Nanos late = std::chrono::milliseconds(1800);
  const WrapTransport wrap = [&](int rank, transport::Transport& inner) {
    std::unique_ptr<transport::Transport> t;
    if (rank == kDecode)
      t = std::make_unique<LateAnswers>(inner, static_cast<uint16_t>(kMsgKvOffer), 2, late);
    if (rank == kConductor)
      t = std::make_unique<LateAnswers>(inner, static_cast<uint16_t>(kMsgKvArrived), 2, late);
    return t;
  };
  InProcessJob job(config, requests, nullptr, wrap);
  RankReport all;
  job.Run(&all);
  EXPECT_EQ(all.errors, 0u) << all.first_error;
  ConductorRole& conductor = *job.node(kConductor).conductor_role();
  EXPECT_TRUE(conductor.LostRequests().empty())
      << conductor.LostRequests().size() << " requests lost, the first "
      << conductor.LostRequests().front();
  uint64_t completed = 0;
  for (const trace::RequestRecord& r : conductor.records()) {
    completed += r.outcome == trace::Outcome::kCompleted;
  }
  EXPECT_GT(completed, 0u);
  EXPECT_EQ(all.blocks_corrupt, 0u);
}

// A prefill or decode rank without an engine is refused at Start, naming what is missing.
TEST(ServeNode, APrefillRankWithoutAnEngineIsRefusedAtStart) {
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(1, &hub);
  transport::Rpc rpc(*transports[0]);
  const engine::CostModel cost = testing::Llama70bA800();
  const engine::KvLayout layout(cost, 1.0 / 8192, "llama3-70b");
  const ServeConfig config = FastConfig();
  ServeNode node(ServePart::kPrefill,
                 ServeNodeDeps{*transports[0], rpc, ServePeers{Rank{0}, Rank{0}, {0}, {}}, {}, {}},
                 config, cost, layout);
  const Status s = node.Start();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.ToString().find("ServeNodeDeps::engine"), std::string::npos) << s.ToString();
  rpc.Stop();
}

}  // namespace
}  // namespace mooncake::serve

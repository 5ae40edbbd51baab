// The serving path in one process: a conductor (with the store's metadata master), a store, a
// prefill and a decode rank over the loopback transport replay a synthetic workload with real
// (scaled) KV bytes. No MPI, no UCX: the roles run on their narrow dependencies alone.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "engine/cost_model_engine.h"
#include "serve/serve_node.h"
#include "serve/workload.h"
#include "support/paper_cost_model.h"
#include "transport/loopback/loopback_transport.h"

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
// and imported everywhere, as the live job's bootstrap does.
class InProcessJob {
 public:
  InProcessJob(const ServeConfig& config, const std::vector<trace::TraceRequest>& requests)
      : cost_(testing::Llama70bA800()),
        layout_(cost_, 1.0 / 8192, "llama3-70b"),
        engine_(cost_, layout_),
        counting_(engine_) {
    transports_ = transport::CreateLoopbackCluster(kRanks, &hub_);
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
      nodes_.push_back(std::make_unique<ServeNode>(
          parts[r], ServeNodeDeps{*transports_[r], *rpcs_[r], peers, *topology, local, &counting_},
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
    auto region =
        transports_[rank]->RegisterMemory(buffer->get(), bytes, transport::MemoryType::kHost);
    ASSERT_TRUE(region.ok());
    (*regions)[rank].push_back(*transports_[rank]->Export(*region));
  }

  engine::CostModel cost_;
  engine::KvLayout layout_;
  engine::CostModelEngine engine_;  // stateless, so the prefill and the decode rank share it
  CountingEngine counting_;
  std::shared_ptr<transport::LoopbackHub> hub_;
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

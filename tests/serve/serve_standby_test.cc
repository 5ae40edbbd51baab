// A standby conductor takes over a serving job in one process (issue 33, items 1 and 2;
// docs/FAULTS.md "A standby conductor (the serving job)"): five loopback ranks (the active
// conductor, the standby, a store, a prefill and a decode rank) replay a synthetic workload; a
// third of the way in the active falls silent (nothing reaches it any more, and it is gone a
// moment later, as a killed process). The standby must take over after the failure timeout and
// finish the job: every request resolved once, none lost or failed, every KV block verified.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
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

constexpr int kActive = 0, kStandby = 1, kStore = 2, kPrefill = 3, kDecode = 4, kRanks = 5;
constexpr size_t kSegmentBytes = 64 << 20, kReceiveBytes = 32 << 20;

struct FreeBytes {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeBytes>;

ServeConfig StandbyConfig() {
  ServeConfig c;
  c.time_scale = 4;
  c.rpc_timeout = std::chrono::seconds(2);
  c.phase_timeout = std::chrono::seconds(20);
  c.job_deadline = std::chrono::seconds(60);
  c.progress_interval = std::chrono::seconds(600);
  // The serving job's defaults: a loaded machine must not make a live rank look dead.
  c.membership.heartbeat_interval = std::chrono::milliseconds(100);
  c.membership.failure_timeout = std::chrono::seconds(1);
  return c;
}

class StandbyJob {
 public:
  StandbyJob(const ServeConfig& config, const std::vector<trace::TraceRequest>& requests)
      : cost_(testing::Llama70bA800()),
        layout_(cost_, 1.0 / 8192, "llama3-70b"),
        engine_(cost_, layout_) {
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
    ServePeers peers{Rank{0}, Rank{kActive}, {kPrefill}, {kDecode}};
    const ServePart parts[] = {ServePart::kConductor, ServePart::kConductor, ServePart::kStore,
                               ServePart::kPrefill, ServePart::kDecode};
    ConductorSetup setup;
    setup.requests = &requests;
    setup.master.service.tick_interval = std::chrono::milliseconds(5);
    for (int r = 0; r < kRanks; ++r) {
      peers.self = Rank{r};
      std::span<std::byte> local;
      if (r == kDecode) local = std::span<std::byte>(receive_.get(), kReceiveBytes);
      ServeNodeDeps deps{*transports_[r], *rpcs_[r], peers, *topology, local, &engine_};
      deps.standby = Rank{kStandby};
      const bool conductor = r == kActive || r == kStandby;
      nodes_.push_back(std::make_unique<ServeNode>(parts[r], deps, config, cost_, layout_,
                                                   conductor ? setup : ConductorSetup{}));
    }
  }
  ~StandbyJob() {
    nodes_.clear();
    for (auto& r : rpcs_) r->Stop();
  }

  ServeNode& node(int rank) { return *nodes_[rank]; }
  transport::LoopbackHub& hub() { return *hub_; }
  void Forget(int rank) { nodes_[rank].reset(); }

 private:
  void Register(int rank, size_t bytes, Buffer* buffer,
                std::vector<std::vector<transport::RemoteDescriptor>>* regions) {
    buffer->reset(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
    std::memset(buffer->get(), 0xa5, bytes);
    auto region =
        transports_[rank]->RegisterMemory(buffer->get(), bytes, transport::MemoryType::kHost);
    ASSERT_TRUE(region.ok());
    (*regions)[rank].push_back(*transports_[rank]->Export(*region));
  }

  engine::CostModel cost_;
  engine::KvLayout layout_;
  engine::CostModelEngine engine_;
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  Buffer segment_, receive_;
  std::vector<std::unique_ptr<ServeNode>> nodes_;
};

TEST(ServeStandby, TheStandbyTakesOverAndEveryRequestEndsOnce) {
  WorkloadSpec spec;
  spec.synthetic.num_requests = 40;
  spec.synthetic.rate_per_s = 4;  // 10 s of model time, 2.5 s of replay at time scale 4
  auto workload = LoadWorkload(spec);
  ASSERT_TRUE(workload.ok());
  const std::vector<trace::TraceRequest>& requests = workload->requests;
  const ServeConfig config = StandbyConfig();
  StandbyJob job(config, requests);
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(job.node(r).Start().ok()) << "rank " << r;
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(job.node(r).SyncClock().ok()) << "rank " << r;
  EXPECT_FALSE(job.node(kStandby).conducts());

  std::vector<std::thread> members;
  for (int r : {kStore, kPrefill, kDecode}) {
    members.emplace_back([&job, r] {
      ServeNode& n = job.node(r);
      n.WaitForStop();
      EXPECT_TRUE(n.SendReport(n.Finish()).ok()) << "rank " << r;
      n.WaitForShutdown();
    });
  }
  RankReport all;
  bool took_over = false;
  std::thread standby([&] {
    ServeNode& n = job.node(kStandby);
    while (!n.conducts() && !n.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    took_over = n.conducts();
    if (!took_over) return;
    n.RunConductor();
    n.StopOthers();
    all = n.CollectReports(n.Finish());
    n.ShutdownOthers();
  });
  std::thread active([&] { job.node(kActive).RunConductor(); });

  // A third of the way in, the active dies: nothing reaches it any more, its replay stops and
  // its node is gone within milliseconds, long before anyone's failure timeout.
  ConductorRole& old = *job.node(kActive).conductor_role();
  for (int i = 0; i < 1000 && old.TakeSnapshot().resolved.size() < requests.size() / 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  transport::SetLoopbackRankPaused(job.hub(), Rank{kActive}, true);
  old.RequestStop();
  active.join();
  job.Forget(kActive);

  standby.join();
  for (auto& t : members) t.join();
  ASSERT_TRUE(took_over) << "the standby never took over";
  ServeNode& now = job.node(kStandby);
  const ServeNode::Failover f = now.failover();
  EXPECT_TRUE(f.took_over);
  EXPECT_EQ(f.old_conductor, kActive);
  EXPECT_GT(f.requests_restored, 0u);
  EXPECT_GE(f.takeover_ms, f.ready_ms);
  EXPECT_GE(f.ready_ms, 1000.0);  // the failure timeout first
  ASSERT_EQ(now.dead_ranks().size(), 1u);
  EXPECT_EQ(now.dead_ranks()[0].rank, Rank{kActive});
  ConductorRole& conductor = *now.conductor_role();
  EXPECT_TRUE(conductor.LostRequests().empty());
  uint64_t completed = 0;
  for (const trace::RequestRecord& r : conductor.records()) {
    EXPECT_NE(r.outcome, trace::Outcome::kFailed) << "request " << r.id.value;
    EXPECT_NE(r.outcome, trace::Outcome::kLost) << "request " << r.id.value;
    if (r.outcome == trace::Outcome::kCompleted) ++completed;
  }
  EXPECT_GT(completed, requests.size() / 2);
  EXPECT_EQ(conductor.totals().blocks_corrupt, 0u);
  EXPECT_EQ(all.blocks_corrupt, 0u);
  EXPECT_GT(conductor.totals().blocks_verified, 0u);
  EXPECT_EQ(all.errors, 0u) << all.first_error;
}

}  // namespace
}  // namespace mooncake::serve

// The store service's ranks in one process: its master and two store ranks (StoreServiceNode:
// store/node's MasterNode and StoreRankNode with the job's lifecycle; no cost model, no KV
// layout, no engine) over the loopback transport, and a client beside them, as `mooncake store`
// runs them under MPI. Each test runs twice: with the master on rank 0, as the launch puts it,
// and on rank 1 (the conductor is whichever rank the membership names, never assumed rank 0).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "serve/store_service_node.h"
#include "store/net/client.h"
#include "store/net/directory.h"
#include "store/net/messages.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::serve {
namespace {

constexpr int kClient = 3, kRanks = 4;
constexpr size_t kSegmentBytes = 4 << 20;

// Which of ranks 0-2 is the master; the other two are store ranks. Rank 3 is the client.
struct Layout {
  int master;
  std::vector<int> stores;
};
void PrintTo(const Layout& layout, std::ostream* os) { *os << "master on rank " << layout.master; }

struct FreeBytes {
  void operator()(std::byte* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeBytes>;

// Three ranks of the service and one attached client's rank, the store ranks' segments
// registered and imported everywhere, as the job's bootstrap does.
class InProcessStore {
 public:
  explicit InProcessStore(const Layout& layout) : layout_(layout) {
    transports_ = transport::CreateLoopbackCluster(kRanks, &hub_);
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    std::vector<std::vector<transport::RemoteDescriptor>> regions(kRanks);
    for (int r : layout_.stores) {
      segments_[r] = Buffer(static_cast<std::byte*>(std::aligned_alloc(4096, kSegmentBytes)));
      auto region = transports_[r]->RegisterMemory(segments_[r].get(), kSegmentBytes,
                                                   transport::MemoryType::kHost);
      EXPECT_TRUE(region.ok());
      regions[r].push_back(*transports_[r]->Export(*region));
    }
    for (int r = 0; r < kRanks; ++r) {
      for (int p = 0; p < kRanks; ++p) {
        for (const auto& d : regions[p]) EXPECT_TRUE(transports_[r]->Import(Rank{p}, d).ok());
      }
    }
    for (int r : layout_.stores) exported_[r] = regions[r].at(0);
    auto topology = store::StoreTopology::FromRegions(layout_.stores, regions);
    EXPECT_TRUE(topology.ok());
    topology_ = *topology;
    config_.phase_timeout = std::chrono::seconds(20);
    // The tests check objects and the service's order, not failure detection (see FastConfig in
    // serve_node_test.cc).
    config_.membership.failure_timeout = std::chrono::seconds(10);
    store::MasterNodeConfig master;
    master.service.tick_interval = std::chrono::milliseconds(5);
    for (int r = 0; r < kClient; ++r) {
      const ServePart part = r == layout_.master ? ServePart::kConductor : ServePart::kStore;
      std::span<std::byte> segment;
      if (r != layout_.master) segment = std::span<std::byte>(segments_[r].get(), kSegmentBytes);
      nodes_.push_back(std::make_unique<StoreServiceNode>(
          part,
          StoreServiceDeps{*transports_[r], *rpcs_[r], Rank{r}, Rank{layout_.master}, topology_,
                           segment},
          config_, master, store::StoreRankConfig{}));
    }
  }
  ~InProcessStore() {
    nodes_.clear();
    for (auto& r : rpcs_) r->Stop();
  }

  StoreServiceNode& node(int rank) { return *nodes_[rank]; }
  transport::Transport& transport(int rank) { return *transports_[rank]; }
  transport::Rpc& rpc(int rank) { return *rpcs_[rank]; }
  const store::StoreTopology& topology() const { return topology_; }
  const transport::RemoteDescriptor& segment(int rank) const { return exported_[rank]; }

  // The stop in order, as the service ends on SIGTERM: the store ranks poll for the master's
  // stop, report and wait for the shutdown. Returns the master's sum of the reports.
  RankReport End() {
    std::vector<std::thread> members;
    for (int r : layout_.stores) {
      members.emplace_back([this, r] {
        SteadyClock clock;
        const Nanos deadline = clock.Now() + std::chrono::seconds(20);
        while (!nodes_[r]->stop_requested() && clock.Now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        EXPECT_TRUE(nodes_[r]->stop_requested()) << "rank " << r;
        EXPECT_TRUE(nodes_[r]->SendReport(nodes_[r]->Finish()).ok());
        nodes_[r]->WaitForShutdown();
      });
    }
    StoreServiceNode& master = *nodes_[layout_.master];
    master.master_node()->StopSpilling();
    master.StopOthers();
    RankReport all = master.CollectReports(master.Finish());
    master.ShutdownOthers();
    for (auto& t : members) t.join();
    return all;
  }

 private:
  Layout layout_;
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  Buffer segments_[kRanks];
  transport::RemoteDescriptor exported_[kRanks];
  store::StoreTopology topology_;
  ServeConfig config_;
  std::vector<std::unique_ptr<StoreServiceNode>> nodes_;
};

std::vector<std::byte> Pattern(int object, size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>((object * 131 + i * 7) & 0xff);
  return v;
}

class StoreServiceNodeTest : public ::testing::TestWithParam<Layout> {};

TEST_P(StoreServiceNodeTest, AClientPutsAndGetsVerifiedObjectsAndTheServiceEndsInOrder) {
  const int kMaster = GetParam().master;
  const int kStore = GetParam().stores[0];
  InProcessStore job(GetParam());
  for (int r = 0; r < kClient; ++r) ASSERT_TRUE(job.node(r).Start().ok()) << "rank " << r;
  ASSERT_NE(job.node(kMaster).master_node(), nullptr);
  ASSERT_NE(job.node(kStore).store_rank(), nullptr);
  EXPECT_EQ(job.node(kStore).store_rank()->has_tier(), false);  // store.ssd = off
  store::StoreClient client(job.transport(kClient), job.rpc(kClient), Rank{kMaster},
                            job.topology());
  constexpr int kObjects = 20;
  for (int i = 0; i < kObjects; ++i) {
    store::ReplicateConfig two;
    two.replicas = 2;  // one on each store rank
    ASSERT_TRUE(client.Put("object-" + std::to_string(i), Pattern(i, 64 << 10), two).ok());
  }
  for (int i = 0; i < kObjects; ++i) {
    auto value = client.GetValue("object-" + std::to_string(i));
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    EXPECT_EQ(*value, Pattern(i, 64 << 10)) << "object " << i;
  }
  EXPECT_EQ(job.node(kMaster).master_node()->service().Stats().objects, uint64_t{kObjects});
  const RankReport all = job.End();
  EXPECT_EQ(all.errors, 0u) << all.first_error;
  EXPECT_TRUE(job.node(kMaster).dead_ranks().empty());
  EXPECT_FALSE(job.node(kMaster).peers_lost());
}

TEST_P(StoreServiceNodeTest, TheMasterAnswersTheDirectoryAndAClientsStop) {
  const int kMaster = GetParam().master;
  InProcessStore job(GetParam());
  for (int r = 0; r < kClient; ++r) ASSERT_TRUE(job.node(r).Start().ok()) << "rank " << r;
  store::StoreDirectory directory;
  directory.world_size = 3;
  directory.master = Rank{kMaster};
  directory.default_replicas = 2;
  for (int r : GetParam().stores) {
    store::StoreRankEntry e;
    e.rank = Rank{r};
    e.hosts = {"127.0.0.1"};
    e.port = static_cast<uint16_t>(7000 + r);
    e.segment = job.segment(r).Encode();
    directory.store_ranks.push_back(std::move(e));
  }
  std::atomic<int> stop_from{-1};
  job.node(kMaster).master_node()->ServeClients(directory,
                                                [&](Rank from) { stop_from = from.value; });
  auto answer = job.rpc(kClient).Call(Rank{kMaster}, store::StoreMsg::kDirectory, {},
                                      std::chrono::seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  auto decoded = store::StoreDirectory::Decode(*answer);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->default_replicas, 2u);
  ASSERT_EQ(decoded->store_ranks.size(), 2u);
  EXPECT_EQ(decoded->store_ranks[1].port, 7000 + GetParam().stores[1]);
  EXPECT_EQ(decoded->master, Rank{kMaster});
  EXPECT_EQ(stop_from.load(), -1);
  auto stopped = job.rpc(kClient).Call(Rank{kMaster}, store::StoreMsg::kServiceStop, {},
                                       std::chrono::seconds(5));
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  SteadyClock clock;
  const Nanos deadline = clock.Now() + std::chrono::seconds(5);
  while (stop_from.load() < 0 && clock.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(stop_from.load(), kClient);
  EXPECT_EQ(job.End().errors, 0u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, StoreServiceNodeTest,
                         ::testing::Values(Layout{0, {1, 2}}, Layout{1, {0, 2}}),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return "MasterOnRank" + std::to_string(info.param.master);
                         });

}  // namespace
}  // namespace mooncake::serve

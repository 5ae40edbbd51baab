// MasterNode::AskDrain, what `mooncake store drain` asks (StoreMsg::kDrain): the refusals that
// name why (not a store rank, not enough free space elsewhere, the last store rank), then a
// drain followed ask by ask until the rank left, every object still intact (issue 33, item 4).
// A master node and three store ranks over the loopback transport, one client.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "common/block_content.h"
#include "store/net/client.h"
#include "store/net/messages.h"
#include "store/node/master_node.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::store {
namespace {

constexpr uint64_t kSegment = 4 << 20;
constexpr size_t kValue = 64 << 10;
const uint64_t kTag = ModelTag("master-drain-ask-test");

std::vector<std::byte> Value(uint64_t id) {
  std::vector<std::byte> v(kValue);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}

class MasterDrainAskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    transports_ = transport::CreateLoopbackCluster(5, &hub_);  // master, 3 stores, a client
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    std::vector<std::vector<transport::RemoteDescriptor>> regions(5);
    for (int s = 1; s <= 3; ++s) {
      memory_.push_back(static_cast<std::byte*>(std::aligned_alloc(64, kSegment)));
      auto region =
          transports_[s]->RegisterMemory(memory_.back(), kSegment, transport::MemoryType::kHost);
      regions[s].push_back(*transports_[s]->Export(*region));
    }
    for (auto& t : transports_) {
      for (int s = 1; s <= 3; ++s) (void)t->Import(Rank{s}, regions[s][0]);
    }
    topology_ = *StoreTopology::FromRegions({1, 2, 3}, regions);
    MasterNodeConfig cfg;
    cfg.service.tick_interval = std::chrono::milliseconds(5);
    // A drained replica's region is held for a lease (a reader may still be reading it).
    cfg.service.master.lease = std::chrono::milliseconds(300);
    master_ = std::make_unique<MasterNode>(cfg, *transports_[0], *rpcs_[0], topology_);
    ASSERT_TRUE(master_->Start().ok());
    client_ = std::make_unique<StoreClient>(*transports_[4], *rpcs_[4], Rank{0}, topology_);
  }
  void TearDown() override {
    client_.reset();
    master_->Stop();
    for (auto& r : rpcs_) r->Stop();
    for (auto& t : transports_) (void)t->Close(Nanos(0));
    for (std::byte* m : memory_) std::free(m);
  }
  // Puts objects 0..n-1 (one replica each, spread by the master).
  void Fill(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(client_->Put("obj/" + std::to_string(i), Value(i), {.replicas = 1}).ok()) << i;
    }
  }
  // Asks until the rank left or 20 s passed; returns the asks it took.
  int DrainToTheEnd(Rank rank) {
    for (int asks = 1; asks < 2000; ++asks) {
      auto r = master_->AskDrain(rank);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok() || r->left) return asks;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "rank " << rank.value << " never left";
    return 0;
  }

  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  std::vector<std::byte*> memory_;
  StoreTopology topology_;
  std::unique_ptr<MasterNode> master_;
  std::unique_ptr<StoreClient> client_;
};

TEST_F(MasterDrainAskTest, ARankThatIsNoStoreRankIsRefusedNamingTheStoreRanks) {
  for (int rank : {0, 4, 9}) {
    auto r = master_->AskDrain(Rank{rank});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
    EXPECT_NE(r.status().message().find("store ranks now: 1, 2, 3"), std::string::npos)
        << r.status().message();
  }
}

TEST_F(MasterDrainAskTest, ARankWhoseBytesDoNotFitElsewhereIsRefusedAndStillTakesPuts) {
  Fill(3 * 45);  // 70 % of 3 x 4 MiB in 64 KiB objects
  auto r = master_->AskDrain(Rank{1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNoSpace);
  EXPECT_NE(r.status().message().find("not enough"), std::string::npos) << r.status().message();
  // Not draining: a second ask checks again rather than reporting progress.
  EXPECT_EQ(master_->AskDrain(Rank{1}).status().code(), ErrorCode::kNoSpace);
}

TEST_F(MasterDrainAskTest, ADrainEndsWithTheRankGoneAndEveryObjectIntactThenTheLastIsRefused) {
  Fill(60);
  EXPECT_GE(DrainToTheEnd(Rank{1}), 2) << "the objects moved within the first ask";
  auto again = master_->AskDrain(Rank{1});  // a repeated ask after the end (a lost answer)
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->left);
  for (int i = 0; i < 60; ++i) {
    auto v = client_->GetValue("obj/" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << i << ": " << v.status().ToString();
    EXPECT_EQ(*v, Value(i)) << i;
  }
  EXPECT_GE(DrainToTheEnd(Rank{2}), 1);
  auto last = master_->AskDrain(Rank{3});
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(last.status().message().find("last store rank"), std::string::npos);
  EXPECT_TRUE(client_->Put("after", Value(99), {.replicas = 1}).ok());
}

// A join needs join slots (the UCX transport's; loopback has none) and a job without SSD tiers:
// each refusal names why, and nothing joins.
TEST_F(MasterDrainAskTest, AJoinIsRefusedNamingWhyWhenItCannotBeServed) {
  master_->ServeJoins([](Rank) { return Status::Ok(); });
  JoinRequest ask;
  ask.hosts = {"127.0.0.1"};
  ask.port = 41000;
  transport::RemoteDescriptor d;
  d.addr = 4096;
  d.length = kSegment;
  ask.segment = d.Encode();
  auto r = rpcs_[4]->Call(Rank{0}, StoreMsg::kJoin, ask.Encode(), std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("has no join slots"), std::string::npos)
      << r.status().ToString();
  master_->Stop();
  // One handler per message id: the first master's join handler goes before the second's.
  ASSERT_TRUE(rpcs_[0]->Unregister(StoreMsg::kJoin));
  MasterNodeConfig ssd;
  ssd.ssd = true;
  MasterNode with_ssd(ssd, *transports_[0], *rpcs_[0], topology_);
  with_ssd.ServeJoins([](Rank) { return Status::Ok(); });
  r = rpcs_[4]->Call(Rank{0}, StoreMsg::kJoin, ask.Encode(), std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(r.status().message().find("store.ssd = on"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(topology_.segments.size(), 3u);
}

}  // namespace
}  // namespace mooncake::store

// The SSD tier wired into the store over the loopback transport: the master's sink
// (SpillCoordinator) asks the store rank's SsdStoreService to spill evicted blocks to its
// Hdf5Tier, gets of spilled keys are served from SSD with verified bytes, repeated hits promote a
// block back to DRAM, and a restarted store recovers every spilled block from the files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "../support/scratch_dir.h"
#include "loopback_store.h"
#include "store/hdf5/tier.h"
#include "store/ssd/ssd_coordinator.h"
#include "store/ssd/ssd_store_service.h"

namespace mooncake::store {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kSegment = 1 << 20;
constexpr uint64_t kBlock = 64 << 10;

std::vector<std::byte> Value(int i) {
  std::vector<std::byte> v(kBlock);
  for (size_t j = 0; j < v.size(); ++j) v[j] = static_cast<std::byte>((i * 131 + j * 7) & 0xff);
  return v;
}
std::string Key(int i) { return "block/" + std::to_string(i); }

// One store rank with an SSD tier under `dir`, one client; the master promotes after 2 SSD hits.
struct SsdStore {
  explicit SsdStore(const std::string& dir, uint32_t promote_after = 2) {
    auto o = testing::Options(1, 1, kSegment);
    o.service.master.promote_after = promote_after;
    store = std::make_unique<testing::LoopbackStore>(o);
    hdf5::Hdf5TierOptions t;
    t.dir = dir;
    t.capacity = 64 << 20;
    t.bucket_bytes = 16 << 20;
    t.on_drop_block = [this](const hdf5::SsdBlock& b) { service->OnTierDrop(b); };
    tier = hdf5::Hdf5Tier::Open(t, &recovery).value();
    service = std::make_unique<SsdStoreService>(
        store->rpc(1), *tier, std::span<std::byte>(store->segment(Rank{1}), kSegment), Rank{0});
    service->Start();
    coordinator = std::make_unique<SpillCoordinator>(store->rpc(0), store->service());
    coordinator->Start();
  }
  ~SsdStore() {
    coordinator->Stop();
    tier->Drain();
  }
  // Puts `key`; a NoSpace while evicted regions are still being spilled is retried once the
  // spills completed (what a client does after "retry").
  Status Put(const std::string& key, std::span<const std::byte> v) {
    Status s = store->client(0).Put(key, v);
    for (int tries = 0; s.code() == ErrorCode::kNoSpace && tries < 10; ++tries) {
      coordinator->WaitIdle(std::chrono::seconds(10));
      s = store->client(0).Put(key, v);
    }
    return s;
  }
  MasterStats Stats() {
    return store->service().WithMaster([](MetadataMaster& m) { return m.Stats(); });
  }
  std::unique_ptr<testing::LoopbackStore> store;
  hdf5::RecoveryReport recovery;
  std::unique_ptr<hdf5::Hdf5Tier> tier;
  std::unique_ptr<SsdStoreService> service;
  std::unique_ptr<SpillCoordinator> coordinator;
};

class SsdLiveTierTest : public ::testing::Test {
 protected:
  test_support::ScratchDir scratch_{"ssd_live_tier"};  // removed after each test
  std::string dir_ = scratch_.path();
};

TEST_F(SsdLiveTierTest, EvictedBlocksSpillAndAreServedFromSsdWithVerifiedBytes) {
  SsdStore s(dir_);
  const int n = 48;  // 3 MiB of blocks over a 1 MiB segment
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  SpillCoordinatorStats c = s.coordinator->Stats();
  EXPECT_GE(c.spilled, 30u);  // at most 16 blocks fit in DRAM
  EXPECT_EQ(c.spill_failures, 0u);
  std::vector<std::byte> out(kBlock);
  for (int i = 0; i < n; ++i) {
    auto r = s.store->client(0).Get(Key(i), out);
    ASSERT_TRUE(r.ok()) << Key(i) << ": " << r.status().ToString();
    EXPECT_EQ(out, Value(i)) << Key(i);
    s.store->clock().Advance(std::chrono::seconds(11));  // leases never pin the whole segment
  }
  EXPECT_GE(s.Stats().ssd_hits, 30u);
  EXPECT_GT(s.service->Stats().reads_served, 0u);
  EXPECT_EQ(s.service->Stats().read_failures, 0u);
}

TEST_F(SsdLiveTierTest, SecondSsdHitPromotesTheBlockBackToDram) {
  SsdStore s(dir_);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  auto tiers = [&](const std::string& key) {
    return s.store->service().WithMaster([&](MetadataMaster& m) {
      std::pair<int, int> dram_ssd{0, 0};
      auto v = m.Get(key);
      for (const auto& r : v.ok() ? v->replicas : std::vector<ReplicaLocation>{}) {
        (r.tier == Tier::kDram ? dram_ssd.first : dram_ssd.second)++;
      }
      return dram_ssd;
    });
  };
  // block/0 was evicted first; the probe above is itself an SSD hit (1), one client get makes 2.
  ASSERT_EQ(tiers(Key(0)), std::make_pair(0, 1));
  std::vector<std::byte> out(kBlock);
  ASSERT_TRUE(s.store->client(0).Get(Key(0), out).ok());
  EXPECT_EQ(out, Value(0));
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(s.coordinator->Stats().promotions, 1u);
  EXPECT_EQ(tiers(Key(0)), std::make_pair(1, 1));  // DRAM again, SSD copy kept
  std::fill(out.begin(), out.end(), std::byte{0});
  ASSERT_TRUE(s.store->client(0).Get(Key(0), out).ok());  // read one-sided from DRAM
  EXPECT_EQ(out, Value(0));
}

TEST_F(SsdLiveTierTest, FullTierQueueDropsTheBlockFromDramAndCountsIt) {
  SsdStore s(dir_);
  // A bound smaller than one block: the coordinator declines every spill (dropped, counted).
  s.coordinator->Stop();
  SpillCoordinatorConfig tiny;
  tiny.max_pending_bytes = kBlock - 1;
  s.coordinator = std::make_unique<SpillCoordinator>(s.store->rpc(0), s.store->service(), tiny);
  s.coordinator->Start();
  for (int i = 0; i < 24; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  SpillCoordinatorStats c = s.coordinator->Stats();
  EXPECT_GT(c.refused_at_conductor, 0u);
  EXPECT_EQ(c.spilled, 0u);
  std::vector<std::byte> out(kBlock);
  EXPECT_EQ(s.store->client(0).Get(Key(0), out).status().code(), ErrorCode::kNotFound);
}

TEST_F(SsdLiveTierTest, RestartedStoreRecoversEverySpilledBlock) {
  std::vector<std::string> spilled;
  {
    SsdStore s(dir_);
    s.coordinator->on_spill_recorded = [&](const std::string& k) { spilled.push_back(k); };
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
    ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  }
  ASSERT_GE(spilled.size(), 20u);
  SsdStore s(dir_);  // a new master and DRAM: only the files survive
  EXPECT_EQ(s.recovery.recovered, spilled.size());
  EXPECT_EQ(s.recovery.dropped, 0u);
  s.coordinator->AddRecovered(Rank{1}, ToRecoveredBlocks(s.recovery));
  EXPECT_EQ(s.coordinator->Stats().recovered, spilled.size());
  std::vector<std::byte> out(kBlock);
  for (const std::string& k : spilled) {
    auto r = s.store->client(0).Get(k, out);
    ASSERT_TRUE(r.ok()) << k << ": " << r.status().ToString();
    EXPECT_EQ(out, Value(std::stoi(k.substr(6)))) << k;
  }
}

}  // namespace
}  // namespace mooncake::store

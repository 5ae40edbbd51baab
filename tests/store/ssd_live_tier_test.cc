// The SSD tier wired into the store over the loopback transport: the master's sink
// (SpillCoordinator) asks the store rank's SsdStoreService to spill evicted blocks to its
// Hdf5Tier, gets of spilled keys are served from SSD with verified bytes (staged in the store
// rank's registered region and read one-sided, or in the RPC reply without staging), repeated
// hits promote a block back to DRAM, and a restarted store recovers every spilled block.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

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

// Random bytes per block: no block's bytes appear inside another's (the corruption test finds
// a block in its file by content).
std::vector<std::byte> Value(int i) {
  std::vector<std::byte> v(kBlock);
  std::mt19937_64 rng(1000 + i);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}
std::string Key(int i) { return "block/" + std::to_string(i); }

// One store rank with an SSD tier under `dir`, one client; the master promotes after 2 SSD hits.
struct SsdStore {
  // `staging` null: the store rank has no staging region (clients fall back to kSsdRead).
  // `verify`: the client checks every object it reads against the master's checksum.
  explicit SsdStore(const std::string& dir, uint32_t promote_after = 2,
                    std::optional<SsdStagerConfig> staging = SsdStagerConfig{},
                    bool verify = true) {
    auto o = testing::Options(1, 1, kSegment);
    o.service.master.promote_after = promote_after;
    o.client.verify_checksum = verify;
    store = std::make_unique<testing::LoopbackStore>(o);
    hdf5::Hdf5TierOptions t;
    t.dir = dir;
    t.capacity = 64 << 20;
    t.bucket_bytes = 16 << 20;
    t.on_drop_block = [this](const hdf5::SsdBlock& b) { service->OnTierDrop(b); };
    tier = hdf5::Hdf5Tier::Open(t, &recovery).value();
    SsdStoreServiceConfig sc;
    if (staging) {
      sc.transport = &store->transport(1);
      sc.staging = *staging;
    }
    service = std::make_unique<SsdStoreService>(
        store->rpc(1), *tier, std::span<std::byte>(store->segment(Rank{1}), kSegment), Rank{0}, sc);
    service->Start();
    coordinator = std::make_unique<SpillCoordinator>(store->rpc(0), store->service());
    coordinator->Start();
  }
  ~SsdStore() {
    coordinator->Stop();
    service->Stop();  // before the transports close
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

// The version the master gives each key now (what a client's kSsdStage names).
std::vector<uint64_t> Versions(SsdStore& s, const std::vector<std::string>& keys) {
  std::vector<uint64_t> out;
  for (const auto& k : keys) {
    out.push_back(s.store->service().WithMaster([&](MetadataMaster& m) -> uint64_t {
      auto v = m.Version(k);
      return v.ok() ? *v : 0;
    }));
  }
  return out;
}

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
  EXPECT_EQ(s.service->Stats().staged.blocks_staged, s.Stats().ssd_hits);  // all one-sided
}

// A store rank without a staging region answers kSsdStage NotSupported: the bytes then come
// back in the kSsdRead reply, verified as before.
TEST_F(SsdLiveTierTest, WithoutStagingTheBlocksComeBackInTheReply) {
  SsdStore s(dir_, 2, std::nullopt);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  std::vector<std::byte> out(kBlock);
  ASSERT_TRUE(s.store->client(0).Get(Key(0), out).ok());
  EXPECT_EQ(out, Value(0));
  EXPECT_EQ(s.service->Stats().reads_served, 1u);
  EXPECT_EQ(s.service->Stats().staged.requests, 0u);
}

// A batch get of many SSD-only blocks is cut into pieces that run at once; every byte is right.
TEST_F(SsdLiveTierTest, BatchGetOfSsdBlocksReadsEveryPieceVerified) {
  SsdStore s(dir_, 0);  // never promote: every get below is served from SSD
  const int n = 200;    // 12.5 MiB over a 1 MiB segment: two 8 MiB pieces
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> bufs;
  for (int i = 0; i < 150; ++i) {  // the first 150 were all evicted
    keys.push_back(Key(i));
    bufs.emplace_back(kBlock);
  }
  std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
  auto got = s.store->client(0).BatchGet(keys, outs);
  for (int i = 0; i < 150; ++i) {
    ASSERT_TRUE(got[i].ok()) << Key(i) << ": " << got[i].status().ToString();
    EXPECT_EQ(bufs[i], Value(i)) << Key(i);
  }
  const SsdStagerStats st = s.service->Stats().staged;
  EXPECT_EQ(st.blocks_staged, 150u);
  EXPECT_GE(st.requests, 2u);
}

// A block whose bytes on disk changed is never served: the client's check (or, for a client that
// does not verify, the tier's) answers Corrupt; the other blocks of the batch are served.
TEST_F(SsdLiveTierTest, CorruptBlockOnDiskIsNeverServed) {
  SsdStore s(dir_, 0);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  s.tier->Drain();
  std::string file;
  for (auto& de : fs::directory_iterator(dir_)) file = de.path();
  std::string content;
  {
    std::ifstream in(file, std::ios::binary);
    content.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto v = Value(3);
  size_t at = content.find(std::string(reinterpret_cast<const char*>(v.data()), 4096));
  ASSERT_NE(at, std::string::npos);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at + 100));
    f.put(static_cast<char>(~content[at + 100]));
  }
  std::vector<std::string> keys{Key(2), Key(3)};
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(kBlock));
  std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
  // The client verifies: the store rank stages the bytes as they are, the client's check fails.
  auto got = s.store->client(0).BatchGet(keys, outs);
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(bufs[0], Value(2));
  EXPECT_EQ(got[1].status().code(), ErrorCode::kCorrupt) << got[1].status().ToString();
  // A client that does not verify: the tier checks, and the block is not staged at all.
  auto reply =
      s.store->rpc(s.store->client_rank(0))
          .Call(Rank{1}, SsdMsg::kSsdStage,
                Encode(SsdStageRequest{{Key(2), Key(3)}, Versions(s, {Key(2), Key(3)}), 0}),
                std::chrono::seconds(10));
  SsdStageResponse r;
  ASSERT_TRUE(reply.ok() && Decode(*reply, &r).ok());
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_TRUE(FromEntry(r.entries[0].status).ok());
  EXPECT_EQ(FromEntry(r.entries[1].status).code(), ErrorCode::kCorrupt);
  EXPECT_EQ(r.entries[1].length, 0u);
  EXPECT_EQ(s.service->Stats().staged.read_failures, 1u);
}

// Staging room that a client never released comes back when its lease runs out; a request that
// finds no room within admission_wait is answered Busy.
TEST_F(SsdLiveTierTest, UnreleasedStagingIsReclaimedAfterItsLease) {
  SsdStagerConfig tight;
  tight.staging_bytes = 2 * kBlock;  // room for two blocks
  tight.lease = std::chrono::milliseconds(300);
  tight.admission_wait = std::chrono::seconds(5);
  SsdStore s(dir_, 0, tight);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(Key(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
  transport::Rpc& client_rpc = s.store->rpc(s.store->client_rank(0));
  auto stage = [&](std::vector<std::string> keys) {  // kSsdStage, never released
    auto reply = client_rpc.Call(Rank{1}, SsdMsg::kSsdStage,
                                 Encode(SsdStageRequest{keys, Versions(s, keys), 0}),
                                 std::chrono::seconds(10));
    SsdStageResponse r;
    EXPECT_TRUE(reply.ok() && Decode(*reply, &r).ok());
    return r;
  };
  // Taken before the first stage: its lease starts after t0 and before its answer, which under
  // load may come long after, so only the time from t0 is bounded below by the lease.
  const auto t0 = std::chrono::steady_clock::now();
  SsdStageResponse first = stage({Key(0), Key(1)});
  ASSERT_EQ(first.entries.size(), 2u);
  EXPECT_TRUE(FromEntry(first.entries[1].status).ok());
  SsdStageResponse second = stage({Key(2)});  // waits for the first lease to run out
  EXPECT_GE(std::chrono::steady_clock::now() - t0, tight.lease);
  EXPECT_TRUE(FromEntry(second.entries[0].status).ok());
  EXPECT_EQ(s.service->Stats().staged.leases_expired, 1u);
  s.service->Stop();  // a stopped stager answers Busy
  auto reply = client_rpc.Call(Rank{1}, SsdMsg::kSsdStage,
                               Encode(SsdStageRequest{{Key(3)}, {1}, 0}), std::chrono::seconds(10));
  EXPECT_EQ(reply.status().code(), ErrorCode::kBusy);
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
  // One handler per message id: the replaced coordinator's drop handler goes first.
  ASSERT_TRUE(s.store->rpc(0).Unregister(SsdMsg::kSsdDrop));
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

// Puts 40 blocks under `prefix` (2.5 MiB through a 1 MiB segment): everything put before them
// is evicted and spilled.
void Fill(SsdStore& s, const std::string& prefix) {
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.Put(prefix + std::to_string(i), Value(i)).ok()) << i;
  ASSERT_TRUE(s.coordinator->WaitIdle(std::chrono::seconds(30)));
}

// Issue 27: put k = v1, v1 spilled, remove k, put k = v2, v2 spilled. The tier keyed blocks by
// key alone and skipped the second write ("already on SSD"), so the get read v1's block: a
// checksum failure with verification on, and v1, the removed value, served silently without.
TEST_F(SsdLiveTierTest, RemoveThenReputServesTheNewVersionFromSsd) {
  for (bool verify : {true, false}) {
    SCOPED_TRACE(verify ? "verify_checksum on" : "verify_checksum off");
    const std::string dir = dir_ + (verify ? "/verify" : "/noverify");
    SsdStore s(dir, /*promote_after=*/0, SsdStagerConfig{}, verify);
    int spills_of_k = 0;
    s.coordinator->on_spill_recorded = [&](const std::string& k) { spills_of_k += k == "k"; };
    const std::vector<std::byte> v1 = Value(1001), v2 = Value(2002);
    ASSERT_TRUE(s.Put("k", v1).ok());
    Fill(s, "fill1/");
    ASSERT_EQ(spills_of_k, 1) << "v1 was not spilled";
    ASSERT_TRUE(s.store->client(0).Remove("k").ok());
    ASSERT_TRUE(s.Put("k", v2).ok());
    Fill(s, "fill2/");
    ASSERT_EQ(spills_of_k, 2) << "v2 was not spilled";
    std::vector<std::byte> out(kBlock);
    auto r = s.store->client(0).Get("k", out);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      continue;
    }
    EXPECT_EQ(*r, v2.size());
    EXPECT_TRUE(out == v2) << (out == v1 ? "the removed value v1 was served" : "wrong bytes");
  }
}

// After a restart over the same folder, recovery serves v2 (not the first block it finds, v1)
// and a key removed before the restart stays removed.
TEST_F(SsdLiveTierTest, RecoveryServesTheNewVersionAndNoRemovedKey) {
  const std::vector<std::byte> v1 = Value(1001), v2 = Value(2002), gone = Value(3003);
  {
    SsdStore s(dir_, /*promote_after=*/0);
    std::vector<std::string> spilled;
    s.coordinator->on_spill_recorded = [&](const std::string& k) { spilled.push_back(k); };
    ASSERT_TRUE(s.Put("k", v1).ok());
    ASSERT_TRUE(s.Put("gone", gone).ok());
    Fill(s, "fill1/");
    ASSERT_EQ(std::count(spilled.begin(), spilled.end(), "gone"), 1);
    ASSERT_TRUE(s.store->client(0).Remove("k").ok());
    ASSERT_TRUE(s.store->client(0).Remove("gone").ok());
    ASSERT_TRUE(s.Put("k", v2).ok());
    Fill(s, "fill2/");
    ASSERT_EQ(std::count(spilled.begin(), spilled.end(), "k"), 2);
  }
  SsdStore s(dir_);
  s.coordinator->AddRecovered(Rank{1}, ToRecoveredBlocks(s.recovery));
  std::vector<std::byte> out(kBlock);
  auto r = s.store->client(0).Get("k", out);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(out == v2) << (out == v1 ? "the removed value v1 came back" : "wrong bytes");
  EXPECT_EQ(s.store->client(0).Get("gone", out).status().code(), ErrorCode::kNotFound)
      << "a key removed before the restart came back";
}

// Keys are byte strings of 1..4096 bytes: NUL bytes, non-UTF-8 bytes and a 4096-byte key spill
// and come back after a restart as themselves ("nul\0a" used to come back as "nul"); the empty
// key and a longer one are refused at put time with a message naming the limit.
TEST_F(SsdLiveTierTest, ByteStringKeysUpToTheLimitSpillAndRecover) {
  const std::vector<std::string> keys = {std::string("nul\0a", 5), "nul",
                                         "\xff\xfe\x80 latin1 \xe9", std::string(4096, 'x')};
  {
    SsdStore s(dir_, /*promote_after=*/0);
    std::vector<std::string> spilled;
    s.coordinator->on_spill_recorded = [&](const std::string& k) { spilled.push_back(k); };
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(s.Put(keys[i], Value(500 + i)).ok()) << i;
    for (const std::string& bad : {std::string(), std::string(4097, 'y')}) {
      Status st = s.store->client(0).Put(bad, Value(1));
      EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << bad.size() << " B key";
      EXPECT_NE(st.message().find("4096"), std::string::npos) << st.ToString();
    }
    // A longer key is refused by the reading calls too, naming the limit (not a malformed
    // message from the master).
    std::vector<std::byte> buf(kBlock);
    const std::string longer(4097, 'y');
    for (Status st : {s.store->client(0).Get(longer, buf).status(),
                      s.store->client(0).Exists(longer), s.store->client(0).Remove(longer)}) {
      EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.ToString();
      EXPECT_NE(st.message().find("limit of 4096 bytes"), std::string::npos) << st.ToString();
    }
    Fill(s, "fill/");
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(std::count(spilled.begin(), spilled.end(), keys[i]), 1) << "key " << i;
    }
  }
  SsdStore s(dir_);
  s.coordinator->AddRecovered(Rank{1}, ToRecoveredBlocks(s.recovery));
  std::vector<std::byte> out(kBlock);
  for (size_t i = 0; i < keys.size(); ++i) {
    auto r = s.store->client(0).Get(keys[i], out);
    ASSERT_TRUE(r.ok()) << "key " << i << ": " << r.status().ToString();
    EXPECT_TRUE(out == Value(500 + i)) << "key " << i;
  }
}

}  // namespace
}  // namespace mooncake::store

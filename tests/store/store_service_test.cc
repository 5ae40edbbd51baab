// The store end to end over the loopback transport: MasterService + StoreClient + store segments.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>

#include "common/block_content.h"
#include "loopback_store.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;
constexpr uint64_t kKiB = 1024;
const uint64_t kTag = ModelTag("store-test");

std::vector<std::byte> Value(uint64_t id, size_t size) {
  std::vector<std::byte> v(size);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}
bool Holds(std::span<const std::byte> got, uint64_t id) {
  return VerifyBlockContent({id, 0, kTag}, got);
}

// Both data paths of the client: store segments mapped into the client's process (copied and
// hashed by the client, as over shared memory) and not mapped (moved through Submit, as over a
// network).
testing::LoopbackStoreOptions Paths(testing::LoopbackStoreOptions o, bool mapped) {
  o.mapped = mapped;
  return o;
}

void ConcurrentClientsPutAndGetEveryByteVerified(bool mapped) {
  LoopbackStore store(Paths(testing::Options(3, 2), mapped));
  constexpr int kThreadsPerClient = 2, kObjects = 24;
  auto size_of = [](int t, int i) {
    return static_cast<size_t>(1 + (t * 7919 + i * 104729) % (150 * kKiB));
  };
  std::atomic<int> put_failures{0}, wrong_bytes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2 * kThreadsPerClient; ++t) {
    threads.emplace_back([&, t] {
      StoreClient& c = store.client(t % 2);
      for (int i = 0; i < kObjects; ++i) {
        auto v = Value(t * 1000 + i, size_of(t, i));
        if (!c.Put("obj/" + std::to_string(t) + "/" + std::to_string(i), v,
                   ReplicateConfig{.replicas = 1 + static_cast<uint32_t>(i % 2)})
                 .ok()) {
          ++put_failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(put_failures, 0);
  threads.clear();
  // Every thread reads every object, through both clients, one by one and in batches.
  for (int t = 0; t < 2 * kThreadsPerClient; ++t) {
    threads.emplace_back([&, t] {
      StoreClient& c = store.client((t + 1) % 2);
      for (int w = 0; w < 2 * kThreadsPerClient; ++w) {
        std::vector<std::string> keys;
        std::vector<std::vector<std::byte>> bufs;
        for (int i = 0; i < kObjects; ++i) {
          keys.push_back("obj/" + std::to_string(w) + "/" + std::to_string(i));
          bufs.emplace_back(size_of(w, i));
        }
        if (t % 2 == 0) {
          std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
          auto got = c.BatchGet(keys, outs);
          for (int i = 0; i < kObjects; ++i) {
            if (!got[i].ok() || *got[i] != bufs[i].size() || !Holds(bufs[i], w * 1000 + i)) {
              ++wrong_bytes;
            }
          }
        } else {
          for (int i = 0; i < kObjects; ++i) {
            auto v = c.GetValue(keys[i]);
            if (!v.ok() || v->size() != size_of(w, i) || !Holds(*v, w * 1000 + i)) ++wrong_bytes;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong_bytes, 0);
}

TEST(StoreService, ConcurrentClientsPutAndGetEveryByteVerified) {
  ConcurrentClientsPutAndGetEveryByteVerified(/*mapped=*/true);
}
TEST(StoreService, ConcurrentClientsPutAndGetEveryByteVerifiedUnmapped) {
  ConcurrentClientsPutAndGetEveryByteVerified(/*mapped=*/false);
}

// Sizes that take every branch of the data path: tiny objects grouped into one transfer batch,
// values past the 256 KiB streaming and hash-piece thresholds (not multiples of them), and a
// batch of >= 4 MiB split over two copy threads.
void LargeAndMixedValuesRoundTripEveryByte(bool mapped) {
  auto o = Paths(testing::Options(2, 1, 32 << 20), mapped);
  o.client.copy_threads = 2;
  LoopbackStore store(o);
  StoreClient& c = store.client(0);
  const std::vector<size_t> sizes = {1,
                                     3 * kKiB,
                                     256 * kKiB - 1,
                                     256 * kKiB + 1,
                                     1024 * kKiB,
                                     1024 * kKiB + 17,
                                     100,
                                     4096 * kKiB + 5,
                                     7,
                                     600 * kKiB};
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < sizes.size(); ++i) {
    keys.push_back("big/" + std::to_string(i));
    values.push_back(Value(500 + i, sizes[i]));
  }
  std::vector<std::span<const std::byte>> in(values.begin(), values.end());
  for (const Status& s : c.BatchPut(keys, in, ReplicateConfig{.replicas = 2})) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Each replica holds the value (the put's hash and copy saw the same bytes)...
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto view = store.service().WithMaster([&](MetadataMaster& m) { return m.Get(keys[i]); });
    ASSERT_TRUE(view.ok());
    for (const auto& loc : view->replicas) {
      EXPECT_TRUE(Holds({store.segment(loc.rank) + loc.offset, sizes[i]}, 500 + i)) << keys[i];
    }
  }
  // ...and batched and single gets return it, verified.
  std::vector<std::vector<std::byte>> bufs;
  for (size_t size : sizes) bufs.emplace_back(size);
  std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
  auto got = c.BatchGet(keys, outs);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << keys[i] << ": " << got[i].status().ToString();
    EXPECT_EQ(*got[i], sizes[i]);
    EXPECT_TRUE(Holds(bufs[i], 500 + i)) << keys[i];
    auto one = c.GetValue(keys[i]);
    ASSERT_TRUE(one.ok());
    EXPECT_TRUE(Holds(*one, 500 + i)) << keys[i];
  }
  // A damaged byte deep inside a large value is caught, not returned as the value.
  auto view = store.service().WithMaster([&](MetadataMaster& m) { return m.Get(keys[7]); });
  ASSERT_TRUE(view.ok());
  for (const auto& loc : view->replicas) {
    store.segment(loc.rank)[loc.offset + 3 * 1024 * kKiB + 11] ^= std::byte{4};
  }
  EXPECT_EQ(c.GetValue(keys[7]).status().code(), ErrorCode::kCorrupt);
}

TEST(StoreService, LargeAndMixedValuesRoundTripEveryByte) {
  LargeAndMixedValuesRoundTripEveryByte(/*mapped=*/true);
}
TEST(StoreService, LargeAndMixedValuesRoundTripEveryByteUnmapped) {
  LargeAndMixedValuesRoundTripEveryByte(/*mapped=*/false);
}

TEST(StoreService, ReplicasLandOnDistinctStoreRanksWithTheSameBytes) {
  LoopbackStore store(testing::Options(3, 1));
  auto v = Value(7, 100 * kKiB + 3);
  ASSERT_TRUE(store.client(0).Put("r3", v, ReplicateConfig{.replicas = 3}).ok());
  auto view = store.service().WithMaster([](MetadataMaster& m) { return m.Get("r3"); });
  ASSERT_TRUE(view.ok());
  std::set<int> ranks;
  for (const auto& loc : view->replicas) {
    ranks.insert(loc.rank.value);
    EXPECT_EQ(std::memcmp(store.segment(loc.rank) + loc.offset, v.data(), v.size()), 0)
        << "replica on rank " << loc.rank.value;
  }
  EXPECT_EQ(ranks.size(), 3u);
  EXPECT_EQ(store.client(0).Put("r4", v, ReplicateConfig{.replicas = 4}).code(),
            ErrorCode::kInvalidArgument);
}

void GetFallsBackToTheNextReplicaOnCorruptionOrAFailedRank(bool mapped) {
  LoopbackStore store(Paths(testing::Options(3, 1), mapped));
  StoreClient& c = store.client(0);
  auto v = Value(9, 64 * kKiB);
  ASSERT_TRUE(c.Put("k", v, ReplicateConfig{.replicas = 3}).ok());
  auto view = store.service().WithMaster([](MetadataMaster& m) { return m.Get("k"); });
  ASSERT_TRUE(view.ok());
  const auto& reps = view->replicas;
  // First replica damaged, second replica's rank gone: the third one serves.
  store.segment(reps[0].rank)[reps[0].offset + 100] ^= std::byte{1};
  ASSERT_TRUE(
      store.transport(reps[1].rank.value).UnregisterMemory(store.region(reps[1].rank)).ok());
  std::vector<std::byte> out(v.size());
  auto n = c.Get("k", out);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_TRUE(Holds(out, 9));
  // Every replica bad: Corrupt, never the wrong bytes as a success.
  store.segment(reps[2].rank)[reps[2].offset] ^= std::byte{1};
  EXPECT_EQ(c.Get("k", out).status().code(), ErrorCode::kCorrupt);
}

TEST(StoreService, GetFallsBackToTheNextReplicaOnCorruptionOrAFailedRank) {
  GetFallsBackToTheNextReplicaOnCorruptionOrAFailedRank(/*mapped=*/true);
}
TEST(StoreService, GetFallsBackToTheNextReplicaOnCorruptionOrAFailedRankUnmapped) {
  GetFallsBackToTheNextReplicaOnCorruptionOrAFailedRank(/*mapped=*/false);
}

TEST(StoreService, ErrorCodesAreValues) {
  LoopbackStore store(testing::Options(2, 1));
  StoreClient& c = store.client(0);
  auto v = Value(1, 1000);
  std::vector<std::byte> small(999), out(1000);
  EXPECT_EQ(c.Get("absent", out).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(c.Exists("absent").code(), ErrorCode::kNotFound);
  ASSERT_TRUE(c.Put("k", v).ok());
  EXPECT_EQ(c.Put("k", v).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(c.Put("empty", {}).code(), ErrorCode::kInvalidArgument);
  auto too_small = c.Get("k", small);
  EXPECT_EQ(too_small.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(too_small.status().message().find("1000"), std::string::npos);
  EXPECT_TRUE(c.Exists("k").ok());
  EXPECT_EQ(c.Remove("k").code(), ErrorCode::kBusy);  // Exists took a lease
  store.clock().Advance(std::chrono::seconds(11));
  EXPECT_TRUE(c.Remove("k").ok());
  EXPECT_EQ(c.Get("k", out).status().code(), ErrorCode::kNotFound);
}

TEST(StoreService, BatchExistsAnswersPerKeyAndIsCountedAtTheMaster) {
  LoopbackStore store(testing::Options(2, 1));
  StoreClient& c = store.client(0);
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> vals;
  for (int i = 0; i < 128; ++i) {
    keys.push_back(std::string("e").append(std::to_string(i)));
    vals.push_back(Value(i, 256));
  }
  std::vector<std::span<const std::byte>> spans(vals.begin(), vals.end());
  auto put = c.BatchPut(std::span(keys).first(64), std::span(spans).first(64));
  for (const auto& s : put) ASSERT_TRUE(s.ok()) << s.ToString();
  auto bits = c.BatchExists(keys);
  ASSERT_TRUE(bits.ok());
  for (int i = 0; i < 128; ++i) EXPECT_EQ((*bits)[i], i < 64 ? 1 : 0) << keys[i];
  auto stats = c.MasterStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->exists_keys, 128u);
  EXPECT_EQ(stats->objects, 64u);
}

TEST(StoreService, CallsFailAtTheirDeadlineWhenTheMasterIsSilent) {
  auto o = testing::Options(1, 1);
  o.client.timeout = std::chrono::milliseconds(200);
  LoopbackStore store(o);
  transport::SetLoopbackRankPaused(store.hub(), Rank{0}, true);
  auto v = Value(1, 100);
  Status s = store.client(0).Put("k", v);
  transport::SetLoopbackRankPaused(store.hub(), Rank{0}, false);
  EXPECT_EQ(s.code(), ErrorCode::kTimeout);
  EXPECT_NE(s.message().find("rank 0"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace mooncake::store

// Eviction, leases, no-space and zombie puts, seen through the client over the loopback store.
#include <gtest/gtest.h>

#include <thread>

#include "common/block_content.h"
#include "loopback_store.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;
constexpr uint64_t kKiB = 1024;
const uint64_t kTag = ModelTag("store-eviction-test");

std::vector<std::byte> Value(uint64_t id, size_t size) {
  std::vector<std::byte> v(size);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}
std::string Key(int i) {
  std::string k = "k";  // not "k" + to_string: GCC 12 -Wrestrict false positive
  return k += std::to_string(i);
}

// One store rank of 16 slots of 64 KiB: with the 0.90 watermark and 5 % batches, the 15th
// object evicts exactly one, so after each put 14 objects remain.
testing::LoopbackStoreOptions OneRank() { return testing::Options(1, 1, 16 * 64 * kKiB); }

TEST(StoreEviction, PastTheWatermarkEvictsInLruOrderAndNeverALeasedObject) {
  LoopbackStore store(OneRank());
  StoreClient& c = store.client(0);
  std::vector<std::byte> out(64 * kKiB);
  for (int i = 0; i < 14; ++i) ASSERT_TRUE(c.Put(Key(i), Value(i, 64 * kKiB)).ok()) << i;
  ASSERT_TRUE(c.Get(Key(2), out).ok());             // k2 becomes most recently used
  store.clock().Advance(std::chrono::seconds(11));  // its lease runs out
  ASSERT_TRUE(c.Exists(Key(0)).ok());  // k0: most recent and leased for the rest of the test
  // LRU order now: k1 k3 k4 ... k13 k2 k0. Each further put evicts the least recent unleased.
  const std::vector<int> expected = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2};
  for (int j = 0; j < 16; ++j) {
    ASSERT_TRUE(c.Put(Key(14 + j), Value(14 + j, 64 * kKiB)).ok()) << j;
    if (j < static_cast<int>(expected.size())) {
      int gone = expected[j];
      EXPECT_EQ(c.Get(Key(gone), out).status().code(), ErrorCode::kNotFound) << Key(gone);
      if (j + 1 < static_cast<int>(expected.size())) {
        // The next victim is still there (checked without a lease: a lease would protect it).
        auto alive =
            store.service().WithMaster([&](MetadataMaster& m) { return m.SegmentStats(Rank{1}); });
        EXPECT_EQ(alive->allocations, 14u);
      }
    }
  }
  // k0 was the least recent for the last puts, but leased: it survived with its bytes.
  ASSERT_TRUE(c.Get(Key(0), out).ok());
  EXPECT_TRUE(VerifyBlockContent({0, 0, kTag}, out));
  // Survivors are k0 and the 13 most recent puts, every byte intact.
  for (int i = 1; i < 30; ++i) {
    auto got = c.Get(Key(i), out);
    if (i >= 17) {
      ASSERT_TRUE(got.ok()) << Key(i) << ": " << got.status().ToString();
      EXPECT_TRUE(VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out)) << Key(i);
    } else {
      EXPECT_EQ(got.status().code(), ErrorCode::kNotFound) << Key(i);
    }
  }
}

TEST(StoreEviction, GetOfAnEvictedKeyIsNotFoundNeverOtherBytes) {
  LoopbackStore store(OneRank());
  StoreClient& c = store.client(0);
  std::vector<std::byte> out(64 * kKiB);
  // Many more objects than fit: every get either returns the key's own bytes or NotFound.
  int found = 0;
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(c.Put(Key(i), Value(i, 64 * kKiB)).ok());
  for (int i = 0; i < 64; ++i) {
    auto got = c.Get(Key(i), out);
    if (got.ok()) {
      ++found;
      EXPECT_TRUE(VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out)) << Key(i);
    } else {
      EXPECT_EQ(got.status().code(), ErrorCode::kNotFound) << got.status().ToString();
    }
  }
  EXPECT_GT(found, 0);
  EXPECT_LE(found, 15);
}

TEST(StoreEviction, ObjectLargerThanAnyFreeRegionIsNoSpaceAndDisturbsNothing) {
  LoopbackStore store(OneRank());
  StoreClient& c = store.client(0);
  std::vector<std::byte> out(64 * kKiB);
  // 12 hard-pinned and 2 leased objects: nothing is evictable.
  for (int i = 0; i < 14; ++i) {
    ReplicateConfig cfg{.hard_pin = i < 12};
    ASSERT_TRUE(c.Put(Key(i), Value(i, 64 * kKiB), cfg).ok());
  }
  ASSERT_TRUE(c.Exists(Key(12)).ok());
  ASSERT_TRUE(c.Exists(Key(13)).ok());
  auto big = Value(100, 3 * 64 * kKiB);    // fits the segment, not its 2 free slots
  auto huge = Value(101, 17 * 64 * kKiB);  // larger than the segment
  EXPECT_EQ(c.Put("big", big).code(), ErrorCode::kNoSpace);
  EXPECT_EQ(c.Put("huge", huge).code(), ErrorCode::kNoSpace);
  EXPECT_EQ(c.Get("big", out).status().code(), ErrorCode::kNotFound);
  for (int i = 0; i < 14; ++i) {
    ASSERT_TRUE(c.Get(Key(i), out).ok()) << Key(i);
    EXPECT_TRUE(VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out)) << Key(i);
  }
  auto stats = store.service().WithMaster([](MetadataMaster& m) { return m.Stats(); });
  EXPECT_EQ(stats.evicted_replicas, 0u);
  EXPECT_EQ(stats.objects, 14u);
}

TEST(StoreEviction, ZombiePutIsRevokedAfterItsTimeoutAndItsSpaceReclaimed) {
  LoopbackStore store(OneRank());
  // A client that dies between put-start and put-end: only the put-start reaches the master.
  PutStartRequest start;
  start.keys = {"zombie"};
  start.sizes = {10 * 64 * kKiB};
  auto reply = store.rpc(store.client_rank(0))
                   .Call(Rank{0}, StoreMsg::kPutStart, Encode(start), std::chrono::seconds(5));
  ASSERT_TRUE(reply.ok());
  auto used = [&] {
    return store.service()
        .WithMaster([](MetadataMaster& m) { return m.SegmentStats(Rank{1}); })
        ->used;
  };
  EXPECT_EQ(used(), 10 * 64 * kKiB);
  // The space is reserved while the put is in flight: a second 10-slot object does not fit.
  EXPECT_EQ(store.client(0).Put("other", Value(1, 10 * 64 * kKiB)).code(), ErrorCode::kNoSpace);
  store.clock().Advance(std::chrono::seconds(31));  // past put_timeout (30 s)
  for (int i = 0; i < 200 && used() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the tick thread's period
  }
  EXPECT_EQ(used(), 0u);
  auto stats = store.service().WithMaster([](MetadataMaster& m) { return m.Stats(); });
  EXPECT_EQ(stats.timed_out_puts, 1u);
  EXPECT_TRUE(store.client(0).Put("other", Value(1, 10 * 64 * kKiB)).ok());
  std::vector<std::byte> out(64 * kKiB);
  EXPECT_EQ(store.client(0).Get("zombie", out).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace mooncake::store

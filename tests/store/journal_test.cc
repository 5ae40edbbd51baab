// The journal to a standby conductor and the standby's rebuild (store/journal.h,
// store/standby_table.h; issue 33): a master rebuilt from the journal its active twin produced
// answers Get and Exists as the active does for every committed key, has none of the puts in
// flight, and its allocations overlap neither each other nor what it allocates next.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "store/journal.h"
#include "store/master.h"
#include "store/segment_allocator.h"
#include "store/standby_table.h"

namespace mooncake::store {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr int kRanks = 3;
constexpr uint64_t kCapacity = 256 * kKiB;

TEST(SegmentAllocatorAt, ReservesExactRangesAndRefusesOverlaps) {
  SegmentAllocator a(64 * kKiB);
  auto x = a.AllocateAt(4096, 1000);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(x->offset, 4096u);
  EXPECT_EQ(x->size, 1024u);  // rounded up to the alignment
  EXPECT_EQ(a.AllocateAt(4096 + 960, 64).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(a.AllocateAt(100, 64).status().code(), ErrorCode::kInvalidArgument);  // unaligned
  EXPECT_EQ(a.AllocateAt(64 * kKiB - 64, 128).status().code(), ErrorCode::kInvalidArgument);
  // Out of order and adjacent: both fit, and a normal allocation then avoids all three.
  ASSERT_TRUE(a.AllocateAt(0, 4096).ok());
  ASSERT_TRUE(a.AllocateAt(5120, 64).ok());
  auto y = a.Allocate(2048);
  ASSERT_TRUE(y.ok());
  EXPECT_GE(y->offset, 5184u);
  EXPECT_EQ(a.used(), 4096u + 1024 + 64 + 2048);
  ASSERT_TRUE(a.Free(*x).ok());
  EXPECT_TRUE(a.AllocateAt(4096, 1024).ok());  // freed: free again
}

// An active master with the journal on, and the standby's table fed through the wire form.
class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MasterConfig cfg;
    cfg.put_timeout = std::chrono::seconds(30);
    active_ = std::make_unique<MetadataMaster>(cfg, clock_);
    std::vector<std::pair<Rank, uint64_t>> segments;
    for (int r = 1; r <= kRanks; ++r) {
      EXPECT_TRUE(active_->AddSegment(Rank{r}, kCapacity).ok());
      segments.emplace_back(Rank{r}, kCapacity);
    }
    table_ = StandbyTable(segments);
    active_->TrackChanges(true);
  }
  // What the active's service does after each call: its changes, numbered, to the standby.
  void Ship() {
    JournalBatch batch;
    batch.first_seq = next_seq_;
    active_->TakeChanges(&batch.entries);
    next_seq_ += batch.entries.size();
    auto decoded = JournalBatch::Decode(batch.Encode());
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    ASSERT_TRUE(table_.Apply(*decoded).ok());
  }
  Status Put(const std::string& key, uint64_t size, uint32_t replicas = 1) {
    auto r = active_->PutStart(key, size, ReplicateConfig{.replicas = replicas});
    if (!r.ok()) return r.status();
    return active_->PutEnd(key, 1000 + size);
  }
  std::unique_ptr<MetadataMaster> Rebuild() {
    auto m = std::make_unique<MetadataMaster>(MasterConfig{}, clock_);
    Status s = table_.RestoreInto(*m);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return m;
  }

  ManualClock clock_;
  std::unique_ptr<MetadataMaster> active_;
  StandbyTable table_;
  uint64_t next_seq_ = 1;
};

std::map<std::string, ObjectRecord> ByKey(const std::vector<ObjectRecord>& records) {
  std::map<std::string, ObjectRecord> out;
  for (const auto& r : records) out[r.key] = r;
  return out;
}

// Every DRAM region of `records`, checked pairwise per rank: none may overlap.
void ExpectNoOverlap(const std::vector<ObjectRecord>& records) {
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> by_rank;
  for (const auto& r : records) {
    for (const auto& loc : r.replicas) {
      if (loc.tier == Tier::kDram) by_rank[loc.rank.value].emplace_back(loc.offset, loc.length);
    }
  }
  for (auto& [rank, regions] : by_rank) {
    std::sort(regions.begin(), regions.end());
    for (size_t i = 1; i < regions.size(); ++i) {
      EXPECT_GE(regions[i].first, regions[i - 1].first + regions[i - 1].second)
          << "rank " << rank << ": regions at " << regions[i - 1].first << " and "
          << regions[i].first << " overlap";
    }
  }
}

TEST_F(JournalTest, RebuiltMasterAnswersAsTheActiveForCommittedKeys) {
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(Put("k" + std::to_string(i), (i % 5 + 1) * kKiB, i % 3 + 1).ok());
    Ship();
  }
  for (int i = 0; i < 40; i += 4) {
    ASSERT_TRUE(active_->Remove("k" + std::to_string(i)).ok());
    Ship();
  }
  // Started, never ended: absent after the rebuild, its space free.
  ASSERT_TRUE(active_->PutStart("in-flight", 8 * kKiB, ReplicateConfig{.replicas = 2}).ok());
  Ship();
  // A rank dies: its replicas go, single-replica objects there are lost.
  ASSERT_TRUE(active_->RemoveSegment(Rank{2}).ok());
  Ship();

  auto standby = Rebuild();
  EXPECT_EQ(ByKey(standby->Records()).size(), ByKey(active_->Records()).size());
  const auto active_records = ByKey(active_->Records());
  for (const auto& [key, rec] : ByKey(standby->Records())) {
    ASSERT_TRUE(active_records.count(key)) << key;
    const ObjectRecord& a = active_records.at(key);
    EXPECT_EQ(rec.size, a.size) << key;
    EXPECT_EQ(rec.checksum, a.checksum) << key;
    EXPECT_EQ(rec.version, a.version) << key;
    EXPECT_EQ(rec.replicas, a.replicas) << key;
  }
  for (int i = 0; i < 40; ++i) {
    const std::string key = "k" + std::to_string(i);
    auto got_active = active_->Get(key);
    auto got_standby = standby->Get(key);
    ASSERT_EQ(got_standby.ok(), got_active.ok()) << key;
    EXPECT_EQ(standby->Exists(key).code(), active_->Exists(key).code()) << key;
    if (!got_active.ok()) continue;
    EXPECT_EQ(got_standby->checksum, got_active->checksum) << key;
    EXPECT_EQ(got_standby->replicas, got_active->replicas) << key;
  }
  EXPECT_EQ(standby->Get("in-flight").status().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(standby->SegmentStats(Rank{2}).ok());  // the dead rank's segment is gone
  ExpectNoOverlap(standby->Records());
}

TEST_F(JournalTest, EvictionsAreJournaledSoTheRebuildNeverOverlaps) {
  // 3 ranks x 256 KiB, objects of 16 KiB with 2 replicas: well past the high watermark, so puts
  // evict, and an object often loses one replica while it keeps the other (no erase then: only
  // the eviction's own entry tells the standby that the region is free again).
  for (int i = 0; i < 120; ++i) {
    ASSERT_TRUE(Put("e" + std::to_string(i), 16 * kKiB, 2).ok()) << i;
    Ship();
  }
  EXPECT_GT(active_->Stats().evicted_replicas, 0u);
  auto standby = Rebuild();
  EXPECT_EQ(standby->Stats().objects, active_->Stats().objects);
  ExpectNoOverlap(standby->Records());
  // New puts on the rebuilt master land beside what it restored, never over it.
  for (int i = 0; i < 20; ++i) {
    auto r = standby->PutStart("after" + std::to_string(i), 4 * kKiB, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(standby->PutEnd("after" + std::to_string(i), 7).ok());
  }
  ExpectNoOverlap(standby->Records());
  // Versions go on above the restored ones.
  uint64_t highest = 0;
  for (const auto& r : active_->Records()) highest = std::max(highest, r.version);
  EXPECT_GT(*standby->Version("after0"), highest);
}

TEST_F(JournalTest, ResentBatchesAreSkippedAndGapsRefused) {
  ASSERT_TRUE(Put("a", kKiB).ok());
  JournalBatch first;
  first.first_seq = 1;
  active_->TakeChanges(&first.entries);
  ASSERT_EQ(first.entries.size(), 1u);
  ASSERT_TRUE(table_.Apply(first).ok());
  ASSERT_TRUE(table_.Apply(first).ok());  // resent after a lost answer: nothing twice
  EXPECT_EQ(table_.next_seq(), 2u);
  ASSERT_TRUE(active_->Remove("a").ok());
  JournalBatch gap;
  gap.first_seq = 3;  // entry 2 missing
  active_->TakeChanges(&gap.entries);
  EXPECT_EQ(table_.Apply(gap).code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(table_.objects(), 1u);
}

TEST_F(JournalTest, WithoutTrackingNothingIsNoted) {
  active_->TrackChanges(false);
  ASSERT_TRUE(Put("quiet", kKiB).ok());
  EXPECT_FALSE(active_->has_changes());
}

TEST(JournalBatchWire, RefusesUnknownOpsAndZeroSequence) {
  JournalBatch b;
  b.first_seq = 0;
  EXPECT_FALSE(JournalBatch::Decode(b.Encode()).ok());
  b.first_seq = 1;
  b.entries.push_back(JournalEntry{static_cast<JournalOp>(9), {}, {}, 0});
  EXPECT_FALSE(JournalBatch::Decode(b.Encode()).ok());
}

}  // namespace
}  // namespace mooncake::store

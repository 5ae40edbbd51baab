// The master's hot path (issue 34): a batch call reads the clock once, and PutStart, PutEnd and
// Get of small objects allocate nothing once the master is warm (the forms the RPC service
// uses: BatchPutStartInto, BatchPutEndInto, BatchGetInto). Its own binary: it replaces the
// global operator new to count allocations.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "store/master.h"

namespace {
// Allocations made by this thread while counting is on.
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
}  // namespace

// gcc sees the free below inlined where `new` allocated and warns of a mismatch; this pair is
// the replacement of both, so they match.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace mooncake::store {
namespace {

using std::chrono::milliseconds;
constexpr uint64_t kObj = 4096;
constexpr size_t kBatch = 32;

// A ManualClock that counts its reads.
class CountingClock final : public Clock {
 public:
  Nanos Now() const override {
    ++reads;
    return now;
  }
  Nanos now{0};
  mutable int reads = 0;
};

// Keys longer than the short-string buffer, so that a reused object's key buffer matters.
std::string Key(uint64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-7b/layer-31/kv-block-%012llu", (unsigned long long)i);
  return buf;
}

class MasterHotPathTest : public ::testing::Test {
 protected:
  // One rank of `slots` objects (it evicts past 90 % full); a 20 ms lease.
  MetadataMaster& Make(uint64_t slots) {
    MasterConfig cfg;
    cfg.lease = milliseconds(20);
    master_ = std::make_unique<MetadataMaster>(cfg, clock_);
    EXPECT_TRUE(master_->AddSegment(Rank{1}, slots * kObj).ok());
    return *master_;
  }
  // The next kBatch fresh keys into keys_.
  void NextKeys() {
    keys_.resize(kBatch);
    for (auto& k : keys_) k = Key(next_++);
  }
  CountingClock clock_;
  std::unique_ptr<MetadataMaster> master_;
  std::vector<std::string> keys_;
  uint64_t next_ = 0;
};

TEST_F(MasterHotPathTest, EachBatchCallReadsTheClockOnce) {
  auto& m = Make(64);  // 32-key batches fill it in two rounds: later puts evict
  const std::vector<uint64_t> sizes(kBatch, kObj), sums(kBatch, 1);
  for (int round = 0; round < 8; ++round) {
    NextKeys();
    clock_.now += milliseconds(50);  // the last round's leases have ended: they may be evicted
    clock_.reads = 0;
    for (const auto& r : m.BatchPutStart(keys_, sizes, {}))
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(clock_.reads, 1) << "BatchPutStart, round " << round;
    clock_.reads = 0;
    for (const auto& s : m.BatchPutEnd(keys_, sums)) ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(clock_.reads, 1) << "BatchPutEnd, round " << round;
    clock_.reads = 0;
    for (const auto& r : m.BatchGet(keys_)) ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(clock_.reads, 1) << "BatchGet, round " << round;
    clock_.reads = 0;
    for (uint8_t e : m.BatchExists(keys_)) ASSERT_EQ(e, 1);
    EXPECT_EQ(clock_.reads, 1) << "BatchExists, round " << round;
  }
  EXPECT_GT(m.Stats().evicted_replicas, 0u);
}

// A lookup of a key whose put timed out still sees the timeout with the call's one clock read.
TEST_F(MasterHotPathTest, APutPastItsTimeoutIsRevokedByTheNextBatch) {
  auto& m = Make(64);
  NextKeys();
  const std::vector<uint64_t> sizes(kBatch, kObj), sums(kBatch, 1);
  for (const auto& r : m.BatchPutStart(keys_, sizes, {})) ASSERT_TRUE(r.ok());
  clock_.now += std::chrono::seconds(31);  // past the 30 s put timeout
  for (const auto& s : m.BatchPutEnd(keys_, sums))
    EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.ToString();
  EXPECT_EQ(m.Stats().timed_out_puts, kBatch);
}

TEST_F(MasterHotPathTest, SteadyStatePutStartPutEndAndGetAllocateNothing) {
  auto& m = Make(1024);  // about 920 objects stay; 32 come and 32 go per round once full
  const std::vector<uint64_t> sizes(kBatch, kObj), sums(kBatch, 1);
  std::vector<Status> status;
  std::vector<std::vector<ReplicaLocation>> replicas(kBatch);
  std::vector<ObjectView> views(kBatch);
  long errors = 0;
  const auto round = [&] {
    clock_.now += milliseconds(50);
    m.BatchPutStartInto(keys_, sizes, ReplicateConfig{}, &status,
                        [&](size_t i) { return &replicas[i]; });
    for (const Status& s : status) errors += s.ok() ? 0 : 1;
    m.BatchPutEndInto(keys_, sums, &status);
    for (const Status& s : status) errors += s.ok() ? 0 : 1;
    m.BatchGetInto(keys_, &status, [&](size_t i) { return &views[i]; });
    for (const Status& s : status) errors += s.ok() ? 0 : 1;
  };
  // Warm: the segment fills and evicts, the pools and the slot table reach their size.
  for (int i = 0; i < 200; ++i) {
    NextKeys();
    round();
  }
  ASSERT_EQ(errors, 0);
  ASSERT_GT(m.Stats().evicted_replicas, 1000u);
  long allocations = 0;
  for (int i = 0; i < 100; ++i) {
    NextKeys();  // the test's own key strings are made outside the count
    g_counting = true;
    g_allocations = 0;
    round();
    g_counting = false;
    allocations += g_allocations;
  }
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(allocations, 0) << "allocations in 100 rounds of " << kBatch << " keys";
  EXPECT_EQ(views[0].replicas.size(), 1u);
  EXPECT_EQ(replicas[kBatch - 1].size(), 1u);
}

}  // namespace
}  // namespace mooncake::store

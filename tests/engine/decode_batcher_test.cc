#include "engine/decode_batcher.h"

#include <gtest/gtest.h>

#include <vector>

namespace mooncake::engine {
namespace {

using Batcher = DecodeBatcher<int>;

// Requests join in arrival order while their whole sequence fits in HBM; the first one that does
// not fit stops the queue (no overtaking), so batches grow as room frees up.
TEST(DecodeBatcherTest, AdmitsInArrivalOrderWhileTheSequencesFitInHbm) {
  Batcher b(100);
  b.Enqueue({1, 30, 10, 1});  // needs 40
  b.Enqueue({2, 40, 10, 1});  // 90 in all
  b.Enqueue({3, 5, 10, 1});   // 105: waits, although a later, smaller one would fit
  b.Enqueue({4, 1, 1, 1});
  b.AdmitWaiting();
  ASSERT_EQ(b.batch_size(), 2u);
  EXPECT_EQ(b.waiting_size(), 2u);
  EXPECT_EQ(b.reserved_tokens(), 90);
  EXPECT_EQ(b.context_tokens(), 31 + 41);  // input + generated
}

// A request larger than HBM runs alone rather than waiting forever.
TEST(DecodeBatcherTest, ARequestLargerThanHbmJoinsAnEmptyBatch) {
  Batcher b(10);
  b.Enqueue({1, 100, 5, 1});
  b.Enqueue({2, 1, 1, 1});
  b.AdmitWaiting();
  ASSERT_EQ(b.batch_size(), 1u);
  EXPECT_EQ(b.batch()[0].payload, 1);
}

// Each step gives every member one token in join order; a finished request leaves at once and
// gives its HBM and context back, so the next waiting one can join.
TEST(DecodeBatcherTest, AdvanceGivesOneTokenEachAndRetiresFinishedRequests) {
  Batcher b(50);
  b.Enqueue({1, 20, 2, 1});  // one more token and done
  b.Enqueue({2, 20, 4, 1});
  b.Enqueue({3, 20, 3, 1});  // waits: 22 + 24 + 23 > 50
  b.AdmitWaiting();
  ASSERT_EQ(b.batch_size(), 2u);
  std::vector<std::pair<int, bool>> calls;
  b.Advance([&](const Batcher::Seq& s, bool finished) {
    calls.emplace_back(s.payload, finished);
    EXPECT_EQ(s.generated, 2);
  });
  EXPECT_EQ(calls, (std::vector<std::pair<int, bool>>{{1, true}, {2, false}}));
  ASSERT_EQ(b.batch_size(), 1u);
  EXPECT_EQ(b.reserved_tokens(), 24);
  EXPECT_EQ(b.context_tokens(), 22);
  b.AdmitWaiting();
  ASSERT_EQ(b.batch_size(), 2u);
  EXPECT_EQ(b.context_tokens(), 22 + 21);
}

// A request that stays keeps its state: the live decode role's per-request TBT gaps used to be
// cleared whenever no request before it had finished in the step (it moved each entry onto
// itself, and a std::vector moved onto itself is left empty), so the live TBT was about one step.
TEST(DecodeBatcherTest, ARequestThatStaysKeepsItsPayload) {
  DecodeBatcher<std::vector<double>> b(1000);
  b.Enqueue({{}, 10, 5, 1});
  b.AdmitWaiting();
  for (int step = 0; step < 3; ++step) {
    b.Advance([&](auto& s, bool) { s.payload.push_back(step); });
  }
  ASSERT_EQ(b.batch_size(), 1u);
  EXPECT_EQ(b.batch()[0].payload, (std::vector<double>{0, 1, 2}));
}

// Colocated instances reserve while prefilling and join with the HBM already reserved.
TEST(DecodeBatcherTest, JoinReservedCountsContextButNotHbmTwice) {
  Batcher b(100);
  b.Reserve(30);
  b.JoinReserved({7, 20, 10, 1});
  EXPECT_EQ(b.reserved_tokens(), 30);
  EXPECT_EQ(b.context_tokens(), 21);
  b.Reserve(5);
  b.Release(5);
  EXPECT_EQ(b.reserved_tokens(), 30);
}

}  // namespace
}  // namespace mooncake::engine

// The piece tracker: events since a point, damaged pieces, bans, silence and fencing, the end.
#include "p2p/tracker.h"

#include <gtest/gtest.h>

namespace mooncake::p2p {
namespace {

constexpr Nanos kSecond{1'000'000'000};

Manifest Object(uint32_t pieces) {
  Manifest m;
  m.name = "obj";
  m.piece_size = 4096;
  m.entries = {{"obj", uint64_t{pieces} * 4096, 0644}};
  m.checksums.assign(pieces, 1);
  return m;
}

HolderCopy Copy(int32_t rank) { return HolderCopy{rank, false, {0x1000}, {}}; }

class TrackerTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  Tracker tracker_{TrackerConfig{4, kSecond, 3}, clock_};
};

TEST_F(TrackerTest, ReceiversSeeTheSourceThenEachOthersPieces) {
  ASSERT_TRUE(tracker_.Register(0, RegisterRequest{Object(8), Copy(0)}).ok());
  ASSERT_TRUE(tracker_.Join(1, JoinRequest{"obj", Copy(1)}).ok());
  ASSERT_TRUE(tracker_.Join(2, JoinRequest{"obj", Copy(2)}).ok());
  auto first = tracker_.Update(2, UpdateRequest{"obj", 0, {}, {}, {}, {}});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->events.size(), 3u);  // three joins
  ASSERT_EQ(first->holders.size(), 3u);
  EXPECT_TRUE(first->holders[0].complete);
  EXPECT_FALSE(first->holders[1].complete);
  ASSERT_TRUE(tracker_.Update(1, UpdateRequest{"obj", 0, {5, 6}, {7}, {}, {}}).ok());
  auto second = tracker_.Update(2, UpdateRequest{"obj", first->next, {}, {}, {}, {}});
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->events.size(), 3u);  // landed 5, landed 6, started 7: only what changed
  EXPECT_EQ(second->events[0].kind, EventKind::kLanded);
  EXPECT_EQ(second->events[0].rank, 1);
  EXPECT_EQ(second->events[2].kind, EventKind::kStarted);
  EXPECT_TRUE(second->holders.empty());
}

TEST_F(TrackerTest, ASecondSourceMustBringTheSameManifest) {
  ASSERT_TRUE(tracker_.Register(0, RegisterRequest{Object(8), Copy(0)}).ok());
  EXPECT_TRUE(tracker_.Register(1, RegisterRequest{Object(8), Copy(1)}).ok());
  Manifest other = Object(8);
  other.checksums[3] = 99;
  Status s = tracker_.Register(2, RegisterRequest{other, Copy(2)});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("other contents"), std::string::npos);
}

TEST_F(TrackerTest, DamagedPiecesAreDroppedAndAHolderServingThreeIsBanned) {
  ASSERT_TRUE(tracker_.Register(0, RegisterRequest{Object(8), Copy(0)}).ok());
  ASSERT_TRUE(tracker_.Register(1, RegisterRequest{Object(8), Copy(1)}).ok());
  ASSERT_TRUE(tracker_.Join(2, JoinRequest{"obj", Copy(2)}).ok());
  auto seen = tracker_.Update(2, UpdateRequest{"obj", 0, {}, {}, {}, {}});
  ASSERT_TRUE(seen.ok());
  auto after = tracker_.Update(2, UpdateRequest{"obj", seen->next, {}, {}, {{1, 3}, {1, 4}}, {}});
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->events.size(), 2u);
  EXPECT_EQ(after->events[0].kind, EventKind::kDropped);
  EXPECT_EQ(after->events[0].piece, 3u);
  auto banned = tracker_.Update(2, UpdateRequest{"obj", after->next, {}, {}, {{1, 5}}, {}});
  ASSERT_TRUE(banned.ok());
  ASSERT_EQ(banned->events.size(), 2u);  // dropped 5, then rank 1 left
  EXPECT_EQ(banned->events[1].kind, EventKind::kLeft);
  EXPECT_EQ(banned->events[1].rank, 1);
  auto list = tracker_.List();
  ASSERT_EQ(list.objects.size(), 1u);
  EXPECT_EQ(list.objects[0].complete_holders, 1u);
}

TEST_F(TrackerTest, ASilentRankIsDeclaredDeadLeavesItsObjectsAndIsFenced) {
  ASSERT_TRUE(tracker_.Register(0, RegisterRequest{Object(4), Copy(0)}).ok());
  ASSERT_TRUE(tracker_.Join(3, JoinRequest{"obj", Copy(3)}).ok());
  clock_.Advance(kSecond / 2);
  for (int r : {0, 1, 2}) ASSERT_TRUE(tracker_.Heartbeat(r).ok());
  clock_.Advance(kSecond * 7 / 10);  // rank 3 silent for 1.2 s, the others for 0.7 s
  auto hb = tracker_.Heartbeat(1);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(hb->dead, std::vector<int32_t>{3});
  auto events = tracker_.Update(1, UpdateRequest{"obj", 0, {}, {}, {}, {}});
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->events.back().kind, EventKind::kLeft);
  EXPECT_EQ(events->events.back().rank, 3);
  Status fenced = tracker_.Heartbeat(3).status();
  EXPECT_EQ(fenced.code(), ErrorCode::kPeerFailure);
  EXPECT_NE(fenced.message().find("declared dead"), std::string::npos);
  ASSERT_EQ(tracker_.DeadRanks().size(), 1u);
  EXPECT_NE(tracker_.DeadRanks()[0].second.find("no heartbeat for 1.2 s"), std::string::npos);
}

TEST_F(TrackerTest, FinishedOnceEveryRankReportedOrIsDead) {
  for (int r : {0, 1, 2}) {
    RankReport report;
    report.rank = r;
    ASSERT_TRUE(tracker_.ReportDone(r, report).ok());
  }
  EXPECT_FALSE(tracker_.Finished());
  for (int step = 0; step < 2; ++step) {  // ranks 0-2 keep beating; rank 3 never speaks
    clock_.Advance(kSecond * 6 / 10);
    for (int r : {0, 1, 2}) ASSERT_TRUE(tracker_.Heartbeat(r).ok());
  }
  EXPECT_TRUE(tracker_.Finished());
  EXPECT_FALSE(tracker_.AllLeft());
  for (int r : {0, 1, 2}) ASSERT_TRUE(tracker_.Leave(r).ok());
  EXPECT_TRUE(tracker_.AllLeft());
  ASSERT_EQ(tracker_.DeadRanks().size(), 1u);
  EXPECT_EQ(tracker_.DeadRanks()[0].first, 3);
}

TEST_F(TrackerTest, PiecesOfAnObjectNotHeldAreRefused) {
  ASSERT_TRUE(tracker_.Register(0, RegisterRequest{Object(4), Copy(0)}).ok());
  EXPECT_FALSE(tracker_.Update(2, UpdateRequest{"obj", 0, {1}, {}, {}, {}}).ok());
  ASSERT_TRUE(tracker_.Join(2, JoinRequest{"obj", Copy(2)}).ok());
  EXPECT_FALSE(tracker_.Update(2, UpdateRequest{"obj", 0, {4}, {}, {}, {}}).ok());
  EXPECT_FALSE(tracker_.Update(2, UpdateRequest{"obj", 99, {}, {}, {}, {}}).ok());
  EXPECT_EQ(tracker_.Lookup(1, "nope").status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace mooncake::p2p

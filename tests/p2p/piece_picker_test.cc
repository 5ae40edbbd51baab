// The piece order: each receiver reads its own stripe from the source and the rest from the
// other receivers (rarest first); it reads another stripe from the source only when idle;
// a failed holder or a damaged piece is never chosen again.
#include "p2p/piece_picker.h"

#include <gtest/gtest.h>

#include <set>

namespace mooncake::p2p {
namespace {

TEST(PiecePicker, ReceiversStartAtTheirOwnStripeOfTheSource) {
  // 4 ranks: 0 the source; 1..3 receivers own stripes 0..2 of 3 over 12 pieces.
  std::set<uint32_t> firsts;
  for (int32_t self = 1; self <= 3; ++self) {
    PiecePicker p(12, 4, self, self - 1, 3);
    p.AddHolder(0, true);
    auto pick = p.Next({});
    ASSERT_TRUE(pick);
    EXPECT_EQ(pick->holder, 0);
    firsts.insert(pick->piece);
  }
  EXPECT_EQ(firsts, (std::set<uint32_t>{0, 4, 8}));
}

TEST(PiecePicker, OwnStripeThenWhatReceiversHoldRarestFirstNeverOtherStripesFromTheSource) {
  PiecePicker p(10, 4, 3, 0, 2);  // this rank owns pieces 0-4
  p.AddHolder(0, true);
  p.AddHolder(1, false);
  p.AddHolder(2, false);
  p.HolderHas(1, 7);
  p.HolderHas(2, 7);
  p.HolderHas(2, 9);
  p.HolderHas(2, 1);
  const PickerLimits wide{8, 8};
  std::vector<std::pair<uint32_t, int32_t>> picks;
  while (auto pick = p.Next(wide)) picks.emplace_back(pick->piece, pick->holder);
  const std::vector<std::pair<uint32_t, int32_t>> want{{0, 0}, {1, 2}, {2, 0},
                                                       {3, 0}, {4, 0}, {9, 2}};
  ASSERT_GE(picks.size(), want.size() + 1);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(picks[i], want[i]) << i;
  EXPECT_EQ(picks[6].first, 7u);  // held by two receivers: after 9
  EXPECT_NE(picks[6].second, 0);
  EXPECT_EQ(picks.size(), 7u);  // 5, 6, 8: only at the source, another rank's stripe
  for (auto [piece, holder] : picks) {
    p.End({piece, holder});
    p.Have(piece);
  }
  EXPECT_FALSE(p.Next(wide));
  auto stolen = p.Next(wide, /*may_steal=*/true);  // idle: the end of the other stripe
  ASSERT_TRUE(stolen);
  EXPECT_EQ(stolen->piece, 8u);
  EXPECT_EQ(stolen->holder, 0);
}

TEST(PiecePicker, IdleRanksStealPiecesNobodyStarted) {
  PiecePicker p(4, 3, 2, 0, 2);  // owns 0-1
  p.AddHolder(0, true);
  p.Have(0);
  p.Have(1);
  p.StartedElsewhere(3);
  auto pick = p.Next({}, true);
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->piece, 2u);
}

TEST(PiecePicker, OnlyTheStripesOfOwnersThatLeftAreTakenOverEarly) {
  PiecePicker p(6, 4, 1, 0, 2);  // rank 1 owns pieces 0-2, rank 2 owns 3-5
  p.SetStripeOwners({1, 2});
  p.AddHolder(0, true);
  p.AddHolder(2, false);
  for (uint32_t i = 0; i < 3; ++i) p.Have(i);
  EXPECT_FALSE(p.Next({}, /*steal_orphans=*/true));  // rank 2 is alive: wait for it
  auto late = p.Next({}, true, /*steal_any=*/true);  // idle long: take one anyway
  ASSERT_TRUE(late);
  EXPECT_EQ(late->piece, 5u);
  p.End(*late);
  p.RemoveHolder(2);  // rank 2 died
  auto orphan = p.Next({}, true);
  ASSERT_TRUE(orphan);
  EXPECT_EQ(orphan->holder, 0);
  EXPECT_GE(orphan->piece, 3u);
}

TEST(PiecePicker, InFlightLimitsPerHolder) {
  PiecePicker p(100, 3, 2, 0, 1);
  p.AddHolder(0, true);
  p.AddHolder(1, false);
  for (uint32_t i = 50; i < 100; ++i) p.HolderHas(1, i);
  const PickerLimits limits{3, 2};
  int from_source = 0, from_peer = 0;
  while (auto pick = p.Next(limits)) (pick->holder == 0 ? from_source : from_peer)++;
  EXPECT_EQ(from_source, 2);
  EXPECT_EQ(from_peer, 3);
  EXPECT_EQ(p.in_flight(), 5u);
}

TEST(PiecePicker, ReadsThatFinishAtOnceAlternateBetweenEqualSources) {
  // Mapped copies end inside the round, so nothing is ever in flight when the next piece is
  // chosen: the reads must still spread evenly over the two sources (a damaged source is then
  // asked for every other piece, whatever the timing, and caught: mpi_p2p_corrupt).
  for (int32_t self = 2; self <= 3; ++self) {
    PiecePicker p(40, 4, self, 0, 1);
    p.AddHolder(0, true);
    p.AddHolder(1, true);
    int from[2] = {0, 0};
    for (int i = 0; i < 6; ++i) {
      auto pick = p.Next({});
      ASSERT_TRUE(pick);
      ++from[pick->holder];
      p.Have(pick->piece);
      p.End(*pick);
    }
    EXPECT_EQ(from[0], 3) << "self " << self;
    EXPECT_EQ(from[1], 3) << "self " << self;
  }
}

TEST(PiecePicker, AFailedHolderAndADamagedPieceAreNotChosenAgain) {
  PiecePicker p(2, 4, 3, 0, 1);
  p.AddHolder(0, true);
  p.AddHolder(1, true);
  auto a = p.Next({1, 1});
  auto b = p.Next({1, 1});
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->holder, b->holder);  // one read in flight per source: both sources busy
  const Pick from1 = a->holder == 1 ? *a : *b;
  const Pick from0 = a->holder == 1 ? *b : *a;
  p.End(from1);
  p.MarkBad(1, from1.piece);  // rank 1 served it damaged
  p.End(from0);
  p.HolderFailed(0);  // rank 0's read failed
  auto retry = p.Next({});
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->piece, from0.piece);
  EXPECT_EQ(retry->holder, 1);
  // The other piece: rank 1 served it damaged and rank 0 failed; nobody is left for it.
  EXPECT_FALSE(p.Next({}, true));
  ASSERT_TRUE(p.Unavailable());
  EXPECT_EQ(*p.Unavailable(), from1.piece);
}

TEST(PiecePicker, DoneWhenEveryPieceIsHere) {
  PiecePicker p(3, 2, 1, 0, 1);
  p.AddHolder(0, true);
  while (auto pick = p.Next({})) {
    p.End(*pick);
    p.Have(pick->piece);
  }
  EXPECT_TRUE(p.complete());
  p.Lost(1);
  EXPECT_FALSE(p.complete());
  auto again = p.Next({});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->piece, 1u);
}

}  // namespace
}  // namespace mooncake::p2p

// The piece order: receivers start at different pieces, prefer what other receivers hold
// (rarest first) over the source, and never go back to a failed holder or a damaged piece.
#include "p2p/piece_picker.h"

#include <gtest/gtest.h>

#include <set>

namespace mooncake::p2p {
namespace {

TEST(PiecePicker, ReceiversStartAtDifferentPiecesOfTheSource) {
  // 4 ranks: 0 the source; 1..3 receivers with stagger index 0..2 of 3 over 12 pieces.
  std::set<uint32_t> firsts;
  for (int32_t self = 1; self <= 3; ++self) {
    PiecePicker p(12, 4, self, 12 * (self - 1) / 3);
    p.AddHolder(0, true);
    auto pick = p.Next({});
    ASSERT_TRUE(pick);
    EXPECT_EQ(pick->holder, 0);
    firsts.insert(pick->piece);
  }
  EXPECT_EQ(firsts, (std::set<uint32_t>{0, 4, 8}));
}

TEST(PiecePicker, PiecesOtherReceiversHoldComeFirstRarestFirst) {
  PiecePicker p(10, 4, 3, 0);
  p.AddHolder(0, true);
  p.AddHolder(1, false);
  p.AddHolder(2, false);
  p.HolderHas(1, 7);
  p.HolderHas(2, 7);
  p.HolderHas(2, 9);
  auto first = p.Next({});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->piece, 9u);  // held by rank 2 and the source: rarer than 7
  EXPECT_EQ(first->holder, 2);  // a receiver before the source
  auto second = p.Next({});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->piece, 7u);
  EXPECT_NE(second->holder, 0);
  auto third = p.Next({});
  ASSERT_TRUE(third);
  EXPECT_EQ(third->piece, 0u);  // then the source, from the start piece on
  EXPECT_EQ(third->holder, 0);
}

TEST(PiecePicker, PiecesOthersStartedAtTheSourceWait) {
  PiecePicker p(4, 3, 2, 0);
  p.AddHolder(0, true);
  p.StartedElsewhere(0);
  p.StartedElsewhere(1);
  auto pick = p.Next({});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->piece, 2u);
}

TEST(PiecePicker, InFlightLimitsPerHolder) {
  PiecePicker p(100, 3, 2, 0);
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

TEST(PiecePicker, AFailedHolderAndADamagedPieceAreNotChosenAgain) {
  PiecePicker p(2, 4, 3, 0);
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
  EXPECT_FALSE(p.Next({}));
  ASSERT_TRUE(p.Unavailable());
  EXPECT_EQ(*p.Unavailable(), from1.piece);
}

TEST(PiecePicker, DoneWhenEveryPieceIsHere) {
  PiecePicker p(3, 2, 1, 0);
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

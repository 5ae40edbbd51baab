#include "cluster/membership.h"

#include <gtest/gtest.h>

namespace mooncake::cluster {
namespace {

Membership FourRanks() {
  return Membership(Rank{0},
                    {{Rank{1}, Role::kStore}, {Rank{2}, Role::kPrefill}, {Rank{3}, Role::kDecode}});
}

std::vector<int32_t> Values(const std::vector<Rank>& ranks) {
  std::vector<int32_t> out;
  for (Rank r : ranks) out.push_back(r.value);
  return out;
}

TEST(Membership, StartsAtEpochZeroWithEveryRankLiveInItsRole) {
  const Membership m = FourRanks();
  EXPECT_EQ(m.epoch(), 0u);
  EXPECT_EQ(Values(m.Live()), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(m.RoleOf(Rank{0}), Role::kConductor);
  EXPECT_EQ(m.RoleOf(Rank{2}), Role::kPrefill);
  EXPECT_FALSE(m.RoleOf(Rank{7}).has_value());
  EXPECT_TRUE(m.dead().empty());
}

TEST(Membership, TheConductorInTheOthersAndDuplicatesAreLeftOut) {
  const Membership m(Rank{2}, {{Rank{2}, Role::kStore},
                               {Rank{1}, Role::kStore},
                               {Rank{1}, Role::kDecode},
                               {Rank{-1}, Role::kStore}});
  EXPECT_EQ(Values(m.Live()), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(m.RoleOf(Rank{2}), Role::kConductor);
  EXPECT_EQ(m.RoleOf(Rank{1}), Role::kStore);
}

TEST(Membership, AJoinBumpsTheEpochAndAddsTheRankInItsRole) {
  Membership m = FourRanks();
  ASSERT_TRUE(m.Join(Rank{4}, Role::kStore).ok());
  EXPECT_EQ(m.epoch(), 1u);
  EXPECT_TRUE(m.IsLive(Rank{4}));
  EXPECT_EQ(Values(m.LiveOf(Role::kStore)), (std::vector<int32_t>{1, 4}));
}

TEST(Membership, ALiveOrDeadRankCannotJoinAgain) {
  Membership m = FourRanks();
  EXPECT_EQ(m.Join(Rank{1}, Role::kStore).code(), ErrorCode::kAlreadyExists);
  ASSERT_TRUE(m.Die(Rank{3}, Nanos(5), "no heartbeat"));
  const Status again = m.Join(Rank{3}, Role::kDecode);
  EXPECT_EQ(again.code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(again.message().find("rank 3 was declared dead"), std::string::npos)
      << again.ToString();
  EXPECT_EQ(m.epoch(), 1u);  // only the death
}

TEST(Membership, ADeathBumpsTheEpochOnceAndKeepsWhy) {
  Membership m = FourRanks();
  EXPECT_TRUE(m.Die(Rank{2}, Nanos(7), "no heartbeat for 1.00 s"));
  EXPECT_FALSE(m.Die(Rank{2}, Nanos(8), "again"));
  EXPECT_FALSE(m.Die(Rank{9}, Nanos(8), "not a member"));
  EXPECT_EQ(m.epoch(), 1u);
  EXPECT_FALSE(m.IsLive(Rank{2}));
  EXPECT_TRUE(m.IsDead(Rank{2}));
  ASSERT_EQ(m.dead().size(), 1u);
  EXPECT_EQ(m.dead()[0].why, "no heartbeat for 1.00 s");
  EXPECT_EQ(m.dead()[0].when, Nanos(7));
}

TEST(Membership, TheConductorIsWhoeverTheMembershipNames) {
  Membership m = FourRanks();
  EXPECT_TRUE(m.IsConductor(Rank{0}));
  ASSERT_TRUE(m.SetConductor(Rank{1}).ok());
  EXPECT_EQ(m.conductor().value, 1);
  EXPECT_FALSE(m.IsConductor(Rank{0}));
  EXPECT_EQ(m.epoch(), 1u);
  ASSERT_TRUE(m.Die(Rank{3}, Nanos(0), "gone"));
  EXPECT_FALSE(m.SetConductor(Rank{3}).ok());  // a dead rank cannot conduct
  EXPECT_EQ(m.conductor().value, 1);
}

TEST(Membership, AnotherRankTakesTheConductorsViewAndLearnsTheNewlyDead) {
  Membership conductor = FourRanks();
  Membership other = FourRanks();
  ASSERT_TRUE(conductor.Join(Rank{5}, Role::kStore).ok());
  ASSERT_TRUE(conductor.Die(Rank{2}, Nanos(1), "no heartbeat"));
  auto dead = other.Apply(conductor.View(), Nanos(3));
  ASSERT_TRUE(dead.ok()) << dead.status().ToString();
  EXPECT_EQ(Values(*dead), (std::vector<int32_t>{2}));
  EXPECT_EQ(other.epoch(), 2u);
  EXPECT_EQ(Values(other.Live()), (std::vector<int32_t>{0, 1, 3, 5}));
  EXPECT_EQ(other.RoleOf(Rank{5}), Role::kStore);
  // The same view again declares nobody new.
  auto again = other.Apply(conductor.View(), Nanos(4));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

TEST(Membership, AStaleViewIsRefused) {
  Membership conductor = FourRanks();
  const MembershipView old = conductor.View();  // epoch 0: rank 2 live
  ASSERT_TRUE(conductor.Die(Rank{2}, Nanos(1), "no heartbeat"));
  Membership other = FourRanks();
  ASSERT_TRUE(other.Apply(conductor.View(), Nanos(2)).ok());
  auto stale = other.Apply(old, Nanos(3));
  EXPECT_EQ(stale.status().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(stale.status().message().find("epoch 0 is older than this rank's epoch 1"),
            std::string::npos)
      << stale.status().ToString();
  EXPECT_FALSE(other.IsLive(Rank{2}));  // a late message does not bring a dead rank back
}

TEST(Membership, TheViewCrossesTheWireAndAMalformedOneIsRefused) {
  Membership m = FourRanks();
  ASSERT_TRUE(m.Die(Rank{1}, Nanos(0), "gone"));
  auto decoded = MembershipView::Decode(m.View().Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->epoch, 1u);
  EXPECT_EQ(decoded->conductor, 0);
  EXPECT_EQ(decoded->live, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(decoded->dead, (std::vector<int32_t>{1}));
  MembershipView bad = m.View();
  bad.roles.pop_back();
  EXPECT_EQ(MembershipView::Decode(bad.Encode()).status().code(), ErrorCode::kProtocolError);
  bad = m.View();
  bad.roles[0] = 9;
  EXPECT_EQ(MembershipView::Decode(bad.Encode()).status().code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::cluster

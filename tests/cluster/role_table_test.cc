#include "cluster/role_table.h"

#include <gtest/gtest.h>

namespace mooncake::cluster {
namespace {

TEST(RoleTableTest, DefaultRuleFitsEveryWorldSizeFrom4To64) {
  for (int n = 4; n <= 64; ++n) {
    auto t = RoleTable::Build("", n);
    ASSERT_TRUE(t.ok()) << n << ": " << t.status().ToString();
    EXPECT_EQ(t->size(), n);
    EXPECT_EQ(t->role(0), Role::kConductor);
    EXPECT_EQ(t->count(Role::kConductor), 1);
    EXPECT_GE(t->count(Role::kStore), 1);
    EXPECT_GE(t->count(Role::kPrefill), 1);
    EXPECT_GE(t->count(Role::kDecode), 1);
    EXPECT_EQ(t->count(Role::kStore) + t->count(Role::kPrefill) + t->count(Role::kDecode), n - 1);
  }
}

TEST(RoleTableTest, DefaultRuleForFourAndSix) {
  auto four = RoleTable::Build("", 4);
  EXPECT_EQ(four->Summary(), "conductor:1 store:1 prefill:1 decode:1");
  EXPECT_EQ(four->role(1), Role::kStore);
  EXPECT_EQ(four->role(2), Role::kPrefill);
  EXPECT_EQ(four->role(3), Role::kDecode);
  EXPECT_EQ(RoleTable::Build("", 6)->Summary(), "conductor:1 store:1 prefill:2 decode:2");
}

TEST(RoleTableTest, TheConductorAndTheMembershipAtStartComeFromTheTable) {
  auto t = RoleTable::Build("conductor,decode,store,prefill", 4);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->conductor().value, 0);
  const Membership m = t->InitialMembership();
  EXPECT_EQ(m.epoch(), 0u);
  EXPECT_TRUE(m.IsConductor(Rank{0}));
  EXPECT_EQ(m.Live().size(), 4u);
  EXPECT_EQ(m.RoleOf(Rank{1}), Role::kDecode);
  EXPECT_EQ(m.RoleOf(Rank{2}), Role::kStore);
}

TEST(RoleTableTest, CountsAndPerRankLists) {
  auto counts = RoleTable::Build("conductor:1 store:2 prefill:1 decode:2", 6);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->RanksOf(Role::kStore), (std::vector<int>{1, 2}));
  EXPECT_EQ(counts->IndexInRole(5), 1);
  auto list = RoleTable::Build("conductor,decode,store,prefill", 4);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->role(1), Role::kDecode);
}

TEST(RoleTableTest, MisfitsNameTheSpecAndTheJobSize) {
  auto too_many = RoleTable::Build("conductor:1 store:5 prefill:1 decode:1", 4);
  EXPECT_EQ(too_many.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("asks for 8 ranks but the job has 4"),
            std::string::npos);
  EXPECT_FALSE(RoleTable::Build("conductor:1 store:1 prefill:2", 4).ok());   // no decode
  EXPECT_FALSE(RoleTable::Build("store,conductor,prefill,decode", 4).ok());  // conductor not 0
  EXPECT_FALSE(RoleTable::Build("conductor:1 cook:3", 4).ok());
  EXPECT_FALSE(RoleTable::Build("conductor:x store:1 prefill:1 decode:1", 4).ok());
  EXPECT_FALSE(RoleTable::Build("", 3).ok());
}

// The store service may have a standby conductor (issue 33): the second conductor, at rank 1.
TEST(RoleTableTest, TheStoreServiceTakesAStandbyConductorAtRankOne) {
  auto one = RoleTable::BuildStoreService("conductor:1 store:2", 3);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->standby(), Rank{-1});
  auto two = RoleTable::BuildStoreService("conductor:2 store:2", 4);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->conductor(), Rank{0});
  EXPECT_EQ(two->standby(), Rank{1});
  EXPECT_EQ(two->Summary(), "conductor:2 store:2");
  EXPECT_FALSE(RoleTable::BuildStoreService("conductor:3 store:1", 4).ok());
  EXPECT_FALSE(RoleTable::BuildStoreService("conductor,store,conductor,store", 4).ok());
  EXPECT_FALSE(RoleTable::BuildStoreService("conductor:2", 2).ok());  // no store rank
}

// The serving job may have one too (issue 33, item 1): rank 1, before the other roles.
TEST(RoleTableTest, TheServingJobTakesAStandbyConductorAtRankOne) {
  auto two = RoleTable::Build("conductor:2 store:2 prefill:2 decode:2", 8);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->conductor(), Rank{0});
  EXPECT_EQ(two->standby(), Rank{1});
  EXPECT_EQ(two->RanksOf(Role::kStore), (std::vector<int>{2, 3}));
  EXPECT_EQ(RoleTable::Build("conductor:1 store:1 prefill:1 decode:1", 4)->standby(), Rank{-1});
  EXPECT_FALSE(RoleTable::Build("conductor:3 store:1 prefill:1 decode:1", 6).ok());
  EXPECT_FALSE(RoleTable::Build("conductor,store,conductor,prefill,decode", 5).ok());
}

}  // namespace
}  // namespace mooncake::cluster

#include "conductor/lru_block_cache.h"

#include <gtest/gtest.h>

namespace mooncake::conductor {
namespace {

std::vector<BlockHash> Blocks(std::initializer_list<uint64_t> ids) {
  std::vector<BlockHash> v;
  for (auto i : ids) v.push_back(BlockHash{i});
  return v;
}

TEST(LruBlockCache, EvictsLeastRecentlyUsed) {
  LruBlockCache c(2);
  std::vector<BlockHash> ev;
  c.Insert(BlockHash{1}, &ev);
  c.Insert(BlockHash{2}, &ev);
  EXPECT_TRUE(c.Touch(BlockHash{1}));
  c.Insert(BlockHash{3}, &ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].value, 2u);
  EXPECT_TRUE(c.Contains(BlockHash{1}));
  EXPECT_FALSE(c.Contains(BlockHash{2}));
  EXPECT_EQ(c.size(), 2u);
}

TEST(LruBlockCache, PrefixStopsAtFirstMissingBlock) {
  LruBlockCache c(0);
  for (auto b : Blocks({1, 2, 4})) c.Insert(b, nullptr);
  EXPECT_EQ(c.PrefixLength(Blocks({1, 2, 3, 4})), 2);
  EXPECT_EQ(c.PrefixLength(Blocks({5, 1})), 0);
}

TEST(LruBlockCache, ZeroCapacityIsUnbounded) {
  LruBlockCache c(0);
  for (uint64_t i = 0; i < 1000; ++i) c.Insert(BlockHash{i}, nullptr);
  EXPECT_EQ(c.size(), 1000u);
}

}  // namespace
}  // namespace mooncake::conductor

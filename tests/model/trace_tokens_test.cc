#include "model/trace_tokens.h"

#include <gtest/gtest.h>

namespace mooncake::model {
namespace {

TEST(TraceTokensTest, RequestsSharingHashIdsShareTheirTokenPrefix) {
  const std::vector<BlockHash> a{{11}, {12}, {13}}, b{{11}, {12}, {99}};
  auto ta = PromptTokens(a, 1100, 512, 512);
  auto tb = PromptTokens(b, 1300, 512, 512);
  ASSERT_TRUE(ta.ok() && tb.ok());
  ASSERT_EQ(ta->size(), 1100u);
  EXPECT_TRUE(std::equal(ta->begin(), ta->begin() + 1024, tb->begin()));
  EXPECT_NE(std::vector<int32_t>(ta->begin() + 1024, ta->end()),
            std::vector<int32_t>(tb->begin() + 1024, tb->begin() + 1100));
  for (int32_t t : *tb) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 512);
  }
}

TEST(TraceTokensTest, APartialBlockDependsOnItsLength) {
  const auto full = BlockTokens(BlockHash{5}, 512, 32000);
  const auto partial = BlockTokens(BlockHash{5}, 100, 32000);
  EXPECT_NE(std::vector<int32_t>(full.begin(), full.begin() + 100), partial);
  EXPECT_EQ(partial, BlockTokens(BlockHash{5}, 100, 32000));
}

// The function is documented (docs/MODEL.md): these values pin it.
TEST(TraceTokensTest, ValuesArePinned) {
  EXPECT_EQ(SplitMix64(0), 0xE220A8397B1DCDAFull);  // splitmix64.c's first output for seed 0
  EXPECT_EQ(BlockTokens(BlockHash{0}, 4, 512),
            (std::vector<int32_t>{245, 58, 301, 505}));  // checked in Python
  EXPECT_EQ(BlockTokens(BlockHash{0}, 4, 512).size(), 4u);
}

TEST(TraceTokensTest, HashCountMustMatchTheLength) {
  const std::vector<BlockHash> two{{1}, {2}};
  EXPECT_FALSE(PromptTokens(two, 512, 512, 100).ok());
  EXPECT_FALSE(PromptTokens(two, 1025, 512, 100).ok());
  EXPECT_TRUE(PromptTokens(two, 513, 512, 100).ok());
}

}  // namespace
}  // namespace mooncake::model

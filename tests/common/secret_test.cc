#include "common/secret.h"

#include <gtest/gtest.h>

#include <unordered_set>
#include <vector>

namespace mooncake {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

TEST(SecretEquals, SameBytesOnlyAndLengthsMustMatch) {
  EXPECT_TRUE(SecretEquals(Bytes({1, 2, 3}), Bytes({1, 2, 3})));
  EXPECT_FALSE(SecretEquals(Bytes({1, 2, 3}), Bytes({1, 2, 4})));
  EXPECT_FALSE(SecretEquals(Bytes({0, 2, 3}), Bytes({1, 2, 3})));
  EXPECT_FALSE(SecretEquals(Bytes({1, 2, 3}), Bytes({1, 2})));
  EXPECT_TRUE(SecretEquals(Bytes({}), Bytes({})));
  EXPECT_TRUE(SecretEquals(7, 9, 7, 9));
  EXPECT_FALSE(SecretEquals(7, 9, 7, 8));
  EXPECT_FALSE(SecretEquals(6, 9, 7, 9));
}

// Transfer acknowledgement tokens: never 0, never repeated, and not the small sequential numbers
// a foreign process would try (issue 28: forged acknowledgements guessing tokens 1..10,000).
TEST(TokenSource, TokensAreUniqueNonzeroAndNotSequential) {
  TokenSource a, b;
  std::unordered_set<uint64_t> seen;
  int small = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t t = a.Next();
    ASSERT_NE(t, 0u);
    ASSERT_TRUE(seen.insert(t).second) << "token repeated after " << i << " draws";
    if (t <= 10000) ++small;
  }
  EXPECT_EQ(small, 0);
  // Two sources (two processes, or one restarted) draw different sequences.
  EXPECT_EQ(seen.count(b.Next()), 0u);
}

}  // namespace
}  // namespace mooncake

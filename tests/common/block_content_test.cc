#include "common/block_content.h"

#include <gtest/gtest.h>

#include <vector>

namespace mooncake {
namespace {

TEST(BlockContentTest, SameKeySameBytesAndVerifies) {
  BlockContentKey key{42, 3, ModelTag("llama3-70b")};
  std::vector<std::byte> a(1001), b(1001);
  FillBlockContent(key, a);
  FillBlockContent(key, b);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(VerifyBlockContent(key, a));
}

TEST(BlockContentTest, FlippedByteOrOtherKeyFailsVerification) {
  BlockContentKey key{42, 3, ModelTag("llama3-70b")};
  std::vector<std::byte> a(4096);
  FillBlockContent(key, a);
  BlockContentKey other = key;
  other.layer = 4;
  EXPECT_FALSE(VerifyBlockContent(other, a));
  a[4095] ^= std::byte{1};
  EXPECT_FALSE(VerifyBlockContent(key, a));
}

}  // namespace
}  // namespace mooncake

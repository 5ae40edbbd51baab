#include "transport/slicing.h"

#include <gtest/gtest.h>

namespace mooncake::transport {
namespace {

TEST(SlicingTest, CountsRoundUpAndSmallRequestsAreOneSlice) {
  EXPECT_EQ(SliceCount(0, 65536), 0u);
  EXPECT_EQ(SliceCount(1, 65536), 1u);
  EXPECT_EQ(SliceCount(65536, 65536), 1u);
  EXPECT_EQ(SliceCount(65537, 65536), 2u);
  EXPECT_EQ(SliceCount(16u << 20, 65536), 256u);
  EXPECT_EQ(SliceCount(1000, 0), 1u);  // slicing off
}

TEST(SlicingTest, SlicesCoverTheRequestExactlyOnce) {
  const size_t length = 1000003, slice = 65536;
  size_t covered = 0;
  for (uint32_t i = 0; i < SliceCount(length, slice); ++i) {
    Slice s = SliceAt(length, slice, i);
    EXPECT_EQ(s.offset, covered);
    covered += s.length;
  }
  EXPECT_EQ(covered, length);
  EXPECT_EQ(SliceAt(length, slice, SliceCount(length, slice) - 1).length, length % slice);
}

}  // namespace
}  // namespace mooncake::transport

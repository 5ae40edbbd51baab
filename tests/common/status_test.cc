#include "common/status.h"

#include <gtest/gtest.h>

namespace mooncake {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s = Status::Ok();
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorNamesCodeAndContext) {
  Status s = NotFound("block 17").WithContext("rank 3");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: rank 3: block 17");
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> good = 5;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 5);
  Result<int> bad = Timeout("peer 2 did not answer");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kTimeout);
}

}  // namespace
}  // namespace mooncake

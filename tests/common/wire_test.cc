#include "common/wire.h"

#include <gtest/gtest.h>

namespace mooncake {
namespace {

TEST(WireTest, RoundTripsFieldsAndStrings) {
  WireWriter w;
  w.Put<uint32_t>(7);
  w.Put<uint64_t>(1ULL << 40);
  w.PutString("rank-3");
  auto bytes = w.Take();
  WireReader r(bytes);
  uint32_t a = 0;
  uint64_t b = 0;
  std::string s;
  ASSERT_TRUE(r.Get(&a));
  ASSERT_TRUE(r.Get(&b));
  ASSERT_TRUE(r.GetString(&s));
  EXPECT_TRUE(r.done());
  EXPECT_EQ(a, 7u);
  EXPECT_EQ(b, 1ULL << 40);
  EXPECT_EQ(s, "rank-3");
}

TEST(WireTest, TruncatedMessageFailsAndStaysFailed) {
  WireWriter w;
  w.Put<uint64_t>(99);
  auto bytes = w.Take();
  bytes.resize(5);
  WireReader r(bytes);
  uint64_t v = 0;
  EXPECT_FALSE(r.Get(&v));
  uint8_t small = 0;
  EXPECT_FALSE(r.Get(&small));  // a failed reader never resumes
  EXPECT_FALSE(r.ok());
}

TEST(WireTest, LengthPrefixLargerThanBufferIsRejected) {
  WireWriter w;
  w.Put<uint32_t>(1000);  // claims 1000 bytes follow
  w.Put<uint32_t>(0);
  auto bytes = w.Take();
  WireReader r(bytes);
  std::string s;
  EXPECT_FALSE(r.GetString(&s));
}

TEST(WireTest, TrailingBytesAreNotDone) {
  WireWriter w;
  w.Put<uint16_t>(1);
  w.Put<uint8_t>(2);
  auto bytes = w.Take();
  WireReader r(bytes);
  uint16_t v = 0;
  ASSERT_TRUE(r.Get(&v));
  EXPECT_FALSE(r.done());
}

}  // namespace
}  // namespace mooncake

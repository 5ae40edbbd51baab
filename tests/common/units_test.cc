#include "common/units.h"

#include <gtest/gtest.h>

namespace mooncake {
namespace {

TEST(ParseBytesTest, BinaryAndDecimalSuffixes) {
  EXPECT_EQ(*ParseBytes("2GiB"), 2ULL << 30);
  EXPECT_EQ(*ParseBytes("64KiB"), 65536u);
  EXPECT_EQ(*ParseBytes("1.5MiB"), 1572864u);
  EXPECT_EQ(*ParseBytes("1GB"), 1000000000u);
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes(" 16 MiB "), 16u << 20);
}

TEST(ParseBytesTest, RejectsUnknownUnitAndGarbage) {
  EXPECT_EQ(ParseBytes("2XB").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseBytes("GiB").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseBytes("-1GiB").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseBytes("").status().code(), ErrorCode::kInvalidArgument);
}

TEST(ParseDurationTest, UnitsAreRequired) {
  EXPECT_EQ(ParseDuration("100ms")->count(), 100'000'000);
  EXPECT_EQ(ParseDuration("30s")->count(), 30'000'000'000);
  EXPECT_EQ(ParseDuration("250us")->count(), 250'000);
  EXPECT_EQ(ParseDuration("2min")->count(), 120'000'000'000);
  EXPECT_FALSE(ParseDuration("100").ok());
  EXPECT_FALSE(ParseDuration("5 parsecs").ok());
}

TEST(FormatTest, HumanReadable) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(3 * kMiB / 2), "1.50 MiB");
}

}  // namespace
}  // namespace mooncake

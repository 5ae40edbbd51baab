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

// Found by fuzz_units: llround of a value past INT64_MAX is undefined (LLONG_MIN on x86), so a
// huge duration came back negative and a size between 2^63 and 1.8e19 bytes came back as 2^63.
TEST(ParseDurationTest, HugeValuesAreOutOfRangeNotNegative) {
  EXPECT_EQ(ParseDuration("22222111112111111s").status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(ParseDuration("9223372036854775808ns").status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(ParseDuration("2562048h").status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(ParseDuration("2562047h")->count(), 2562047LL * 3600 * 1'000'000'000);
  std::string inf = "1" + std::string(400, '0') + "s";  // strtod gives infinity
  EXPECT_EQ(ParseDuration(inf).status().code(), ErrorCode::kOutOfRange);
}

TEST(ParseBytesTest, SizesPastInt64AreExactOrOutOfRange) {
  EXPECT_EQ(*ParseBytes("10000000000000000000"), 10'000'000'000'000'000'000ULL);
  EXPECT_EQ(*ParseBytes("8388608TiB"), 1ULL << 63);
  EXPECT_EQ(ParseBytes("16777216TiB").status().code(), ErrorCode::kOutOfRange);  // 2^64
  EXPECT_EQ(ParseBytes("1" + std::string(400, '0')).status().code(), ErrorCode::kOutOfRange);
}

TEST(FormatTest, HumanReadable) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(3 * kMiB / 2), "1.50 MiB");
}

// The check mode prints its RPC RTTs with it: 376 ms as "376.270 ms", not "376270.2 us".
TEST(FormatTest, DurationInTheUnitThatFits) {
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(850)), "850 ns");
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(12'345)), "12.345 us");
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(376'270'200)), "376.270 ms");
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(1'204'000'000)), "1.204 s");
}

}  // namespace
}  // namespace mooncake

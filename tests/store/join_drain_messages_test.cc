// The join's and the drain's wire messages (store/net/join_drain_messages.h): round trips, every
// truncation and a trailing byte refused, and fields that contradict each other refused after
// decoding.
#include "store/net/join_drain_messages.h"

#include <gtest/gtest.h>

#include "transport/transport.h"

namespace mooncake::store {
namespace {

template <typename T>
void ExpectRejectsTruncationAndTrailing(const std::vector<std::byte>& bytes) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto got = T::Decode(std::span<const std::byte>(bytes.data(), n));
    ASSERT_FALSE(got.ok()) << "a prefix of " << n << " bytes was accepted";
    EXPECT_EQ(got.status().code(), ErrorCode::kProtocolError);
  }
  auto longer = bytes;
  longer.push_back(std::byte{0});
  auto got = T::Decode(longer);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("trailing"), std::string::npos) << got.status().message();
}

std::vector<std::byte> Segment(uint64_t length) {
  transport::RemoteDescriptor d;
  d.addr = 0x7f0000001000;
  d.length = length;
  d.packed_key = {std::byte{1}, std::byte{2}, std::byte{3}};
  return d.Encode();
}

JoinRequest AJoin() {
  JoinRequest m;
  m.hosts = {"10.0.0.7", "127.0.0.1"};
  m.port = 41000;
  m.segment = Segment(64 << 20);
  return m;
}

TEST(JoinMessagesTest, RequestRoundTripsAndRejectsTruncatedInput) {
  auto bytes = AJoin().Encode();
  auto got = JoinRequest::Decode(bytes);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->hosts, AJoin().hosts);
  EXPECT_EQ(got->port, 41000);
  EXPECT_EQ(got->segment, AJoin().segment);
  ExpectRejectsTruncationAndTrailing<JoinRequest>(bytes);
}

TEST(JoinMessagesTest, RequestWithoutAListenerOrWithABadSegmentIsRefused) {
  JoinRequest m = AJoin();
  m.port = 0;
  EXPECT_FALSE(JoinRequest::Decode(m.Encode()).ok());
  m = AJoin();
  m.hosts.clear();
  EXPECT_FALSE(JoinRequest::Decode(m.Encode()).ok());
  m = AJoin();
  m.hosts.assign(kMaxJoinHosts + 1, "10.0.0.1");
  EXPECT_FALSE(JoinRequest::Decode(m.Encode()).ok());
  m = AJoin();
  m.segment.resize(m.segment.size() - 1);  // the descriptor inside is truncated
  EXPECT_FALSE(JoinRequest::Decode(m.Encode()).ok());
  m = AJoin();
  m.segment = Segment(0);
  auto got = JoinRequest::Decode(m.Encode());
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("empty segment"), std::string::npos);
}

TEST(JoinMessagesTest, ReplyRoundTripsAndRefusesANegativeRank) {
  JoinReply m;
  m.rank = 4;
  auto bytes = m.Encode();
  auto got = JoinReply::Decode(bytes);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->rank, 4);
  ExpectRejectsTruncationAndTrailing<JoinReply>(bytes);
  m.rank = -1;
  EXPECT_FALSE(JoinReply::Decode(m.Encode()).ok());
}

TEST(DrainMessagesTest, RequestRoundTripsAndRejectsTruncatedInput) {
  DrainRequest m;
  m.rank = 7;
  auto bytes = m.Encode();
  auto got = DrainRequest::Decode(bytes);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->rank, 7);
  ExpectRejectsTruncationAndTrailing<DrainRequest>(bytes);
}

TEST(DrainMessagesTest, RequestForANegativeRankIsRefused) {
  DrainRequest m;
  m.rank = -3;
  auto got = DrainRequest::Decode(m.Encode());
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("rank -3"), std::string::npos) << got.status().message();
}

TEST(DrainMessagesTest, ReplyRoundTripsAndRejectsTruncatedInput) {
  DrainReply m;
  m.rank = 2;
  m.dram_replicas = 11;
  m.ssd_replicas = 1;
  m.used_bytes = 1 << 20;
  m.copied = 40;
  auto bytes = m.Encode();
  auto got = DrainReply::Decode(bytes);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->rank, 2);
  EXPECT_EQ(got->dram_replicas, 11u);
  EXPECT_EQ(got->ssd_replicas, 1u);
  EXPECT_EQ(got->used_bytes, uint64_t{1} << 20);
  EXPECT_EQ(got->copied, 40u);
  EXPECT_FALSE(got->left);
  ExpectRejectsTruncationAndTrailing<DrainReply>(bytes);
}

TEST(DrainMessagesTest, AReplyThatLeftWhileHoldingDataIsRefused) {
  DrainReply m;
  m.rank = 2;
  m.used_bytes = 4096;
  m.left = true;
  auto got = DrainReply::Decode(m.Encode());
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("still holding"), std::string::npos);
  m.used_bytes = 0;
  EXPECT_TRUE(DrainReply::Decode(m.Encode()).ok());
}

}  // namespace
}  // namespace mooncake::store

#include "store/net/messages.h"

#include <gtest/gtest.h>

#include "common/wire.h"

namespace mooncake::store {
namespace {

// Every strict prefix of a valid encoding must be rejected, and so must one extra byte.
template <typename T>
void ExpectRejectsTruncationAndTrailing(const std::vector<std::byte>& bytes) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    T out;
    Status s = Decode(std::span<const std::byte>(bytes.data(), n), &out);
    ASSERT_EQ(s.code(), ErrorCode::kProtocolError) << "prefix of " << n << " bytes accepted";
  }
  auto longer = bytes;
  longer.push_back(std::byte{0});
  T out;
  Status s = Decode(longer, &out);
  EXPECT_EQ(s.code(), ErrorCode::kProtocolError);
  EXPECT_NE(s.message().find("trailing"), std::string::npos) << s.message();
}

TEST(StoreMessagesTest, PutStartRequestRoundTripsAndRejectsBadInput) {
  PutStartRequest m;
  m.config = ReplicateConfig{2, true, false, {Rank{3}, Rank{5}}};
  m.keys = {"a", "block/17"};
  m.sizes = {4096, 1 << 20};
  auto bytes = Encode(m);
  PutStartRequest got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  EXPECT_EQ(got.config.replicas, 2u);
  EXPECT_TRUE(got.config.soft_pin);
  EXPECT_FALSE(got.config.hard_pin);
  EXPECT_EQ(got.config.preferred_ranks, (std::vector<Rank>{Rank{3}, Rank{5}}));
  EXPECT_EQ(got.keys, m.keys);
  EXPECT_EQ(got.sizes, m.sizes);
  ExpectRejectsTruncationAndTrailing<PutStartRequest>(bytes);
}

TEST(StoreMessagesTest, PutStartRequestWithMismatchedSizesIsRejected) {
  PutStartRequest m;
  m.keys = {"a", "b"};
  m.sizes = {1};
  PutStartRequest got;
  EXPECT_EQ(Decode(Encode(m), &got).code(), ErrorCode::kProtocolError);
}

TEST(StoreMessagesTest, OversizedBatchCountIsRejectedBeforeAllocating) {
  WireWriter w;
  w.Put<uint32_t>(kMaxBatchKeys + 1);
  KeysRequest got;
  EXPECT_EQ(Decode(w.bytes(), &got).code(), ErrorCode::kProtocolError);
  WireWriter w2;
  w2.Put<uint32_t>(1);
  w2.Put<uint32_t>(kMaxKeyBytes + 1);  // key length beyond the cap
  w2.PutString(std::string(kMaxKeyBytes + 1, 'x'));
  EXPECT_EQ(Decode(w2.bytes(), &got).code(), ErrorCode::kProtocolError);
}

TEST(StoreMessagesTest, PutEndRequestRoundTrips) {
  PutEndRequest m{{"x", "y", "z"}, {1, 2, 3}};
  auto bytes = Encode(m);
  PutEndRequest got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  EXPECT_EQ(got.keys, m.keys);
  EXPECT_EQ(got.checksums, m.checksums);
  ExpectRejectsTruncationAndTrailing<PutEndRequest>(bytes);
}

TEST(StoreMessagesTest, KeysRequestRoundTrips) {
  KeysRequest m{{"", "k1", std::string(300, 'q')}};
  auto bytes = Encode(m);
  KeysRequest got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  EXPECT_EQ(got.keys, m.keys);
  ExpectRejectsTruncationAndTrailing<KeysRequest>(bytes);
}

// The client encodes its keys straight from the caller's span: the same bytes as the message.
TEST(StoreMessagesTest, EncodersFromKeySpansGiveTheBytesOfTheirMessages) {
  for (const KeysRequest& m : {KeysRequest{}, KeysRequest{{"k"}},
                               KeysRequest{{"", "k1", std::string(300, 'q'), "x\0y"}}}) {
    EXPECT_EQ(EncodeKeys(m.keys), Encode(m)) << m.keys.size() << " keys";
  }
  const std::vector<std::string> keys = {"a", std::string(40, 'k'), ""};
  const std::vector<uint64_t> sizes = {1, 1ull << 40, 0};
  const ReplicateConfig cfg{.replicas = 2, .soft_pin = true, .preferred_ranks = {Rank{3}}};
  EXPECT_EQ(EncodePutStart(cfg, keys, sizes), Encode(PutStartRequest{cfg, keys, sizes}));
  const std::vector<const std::string*> ptrs = {&keys[1], &keys[0]};
  const std::vector<uint64_t> sums = {7, 9};
  EXPECT_EQ(EncodePutEnd(ptrs, sums), Encode(PutEndRequest{{keys[1], keys[0]}, sums}));
  EXPECT_EQ(EncodePutEnd({}, {}), Encode(PutEndRequest{}));
}

TEST(StoreMessagesTest, StatusResponseRoundTripsAndRejectsUnknownCodes) {
  StatusResponse m{{ToEntry(Status::Ok()), ToEntry(NotFound("object 'k'"))}};
  auto bytes = Encode(m);
  StatusResponse got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  ASSERT_EQ(got.entries.size(), 2u);
  EXPECT_TRUE(FromEntry(got.entries[0]).ok());
  EXPECT_EQ(FromEntry(got.entries[1]).code(), ErrorCode::kNotFound);
  EXPECT_EQ(got.entries[1].message, "object 'k'");
  ExpectRejectsTruncationAndTrailing<StatusResponse>(bytes);
  WireWriter w;
  w.Put<uint32_t>(1);
  w.Put<uint16_t>(999);  // not an ErrorCode
  w.PutString("");
  EXPECT_EQ(Decode(w.bytes(), &got).code(), ErrorCode::kProtocolError);
}

TEST(StoreMessagesTest, PutStartResponseRoundTrips) {
  PutStartResponse m;
  m.entries.push_back({ToEntry(Status::Ok()),
                       {ReplicaLocation{Rank{1}, Tier::kDram, 64, 100},
                        ReplicaLocation{Rank{2}, Tier::kDram, 128, 100}}});
  m.entries.push_back({ToEntry(NoSpace("full")), {}});
  auto bytes = Encode(m);
  PutStartResponse got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  ASSERT_EQ(got.entries.size(), 2u);
  EXPECT_EQ(got.entries[0].replicas, m.entries[0].replicas);
  EXPECT_EQ(got.entries[1].status.code, ErrorCode::kNoSpace);
  ExpectRejectsTruncationAndTrailing<PutStartResponse>(bytes);
}

// DecodeInto (the client's and the master's hot get path) overwrites every field of a reused
// message, stale entries included, and keeps the buffers it already had.
TEST(StoreMessagesTest, DecodeIntoOverwritesEveryFieldAndKeepsTheBuffers) {
  GetResponse m;
  for (int i = 0; i < 3; ++i) {
    GetEntry e;
    e.view = ObjectView{100u + i,
                        7u + i,
                        9u + i,
                        {ReplicaLocation{Rank{i}, Tier::kDram, 64u * i, 100u + i},
                         ReplicaLocation{Rank{i + 1}, Tier::kDram, 8, 100u + i}},
                        std::chrono::seconds(10)};
    m.entries.push_back(e);
  }
  GetResponse reused;
  ASSERT_TRUE(DecodeInto(Encode(m), &reused).ok());
  const ReplicaLocation* first = reused.entries[0].view.replicas.data();
  // The next answer: other values, a miss in the middle, one replica less for the last key.
  GetResponse next = m;
  next.entries[0].view.checksum = 0xbeef;
  next.entries[1] = {ToEntry(NotFound("object 'k1'")), {}};
  next.entries[2].view.replicas.pop_back();
  ASSERT_TRUE(DecodeInto(Encode(next), &reused).ok());
  EXPECT_EQ(reused.entries[0].view.replicas.data(), first) << "the replica vector was reallocated";
  EXPECT_EQ(reused.entries[0].view.checksum, 0xbeefu);
  EXPECT_EQ(reused.entries[1].status.code, ErrorCode::kNotFound);
  EXPECT_EQ(reused.entries[1].status.message, "object 'k1'");
  EXPECT_TRUE(reused.entries[1].view.replicas.empty());
  EXPECT_EQ(reused.entries[1].view.size, 0u);
  EXPECT_EQ(reused.entries[2].view.replicas, next.entries[2].view.replicas);
  // Fewer keys shrink it; a malformed answer is refused.
  next.entries.resize(1);
  ASSERT_TRUE(DecodeInto(Encode(next), &reused).ok());
  EXPECT_EQ(reused.entries.size(), 1u);
  auto bytes = Encode(next);
  bytes.pop_back();
  EXPECT_EQ(DecodeInto(bytes, &reused).code(), ErrorCode::kProtocolError);
}

TEST(StoreMessagesTest, GetResponseRoundTripsAndRejectsBadTier) {
  GetResponse m;
  GetEntry e;
  e.view = ObjectView{
      100, 0xfeed, 42, {ReplicaLocation{Rank{4}, Tier::kSsd, 9, 100}}, std::chrono::seconds(10)};
  m.entries.push_back(e);
  m.entries.push_back({ToEntry(NotFound("gone")), {}});
  auto bytes = Encode(m);
  GetResponse got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  ASSERT_EQ(got.entries.size(), 2u);
  EXPECT_EQ(got.entries[0].view.checksum, 0xfeedu);
  EXPECT_EQ(got.entries[0].view.version, 42u);
  EXPECT_EQ(got.entries[0].view.lease, std::chrono::seconds(10));
  EXPECT_EQ(got.entries[0].view.replicas, e.view.replicas);
  ExpectRejectsTruncationAndTrailing<GetResponse>(bytes);
  // The tier byte of the first replica sits right after status(2+4), size, checksum, version,
  // lease and the replica count, plus the rank.
  auto bad = bytes;
  size_t tier_at = 4 + 2 + 4 + 8 + 8 + 8 + 8 + 4 + 4;
  ASSERT_EQ(bad[tier_at], std::byte{1});
  bad[tier_at] = std::byte{7};
  EXPECT_EQ(Decode(bad, &got).code(), ErrorCode::kProtocolError);
}

TEST(StoreMessagesTest, ExistsResponseRoundTripsAndRejectsNonBooleans) {
  ExistsResponse m{{1, 0, 1, 1}};
  auto bytes = Encode(m);
  ExistsResponse got;
  ASSERT_TRUE(Decode(bytes, &got).ok());
  EXPECT_EQ(got.exists, m.exists);
  ExpectRejectsTruncationAndTrailing<ExistsResponse>(bytes);
  ExistsResponse bad{{2}};
  EXPECT_EQ(Decode(Encode(bad), &got).code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::store

namespace mooncake::store {
namespace {

TEST(StoreMessages, StatsResponseRoundTripsAndRejectsTruncation) {
  StatsResponse s;
  s.objects = 3;
  s.exists_keys = 128;
  s.exists_ns = 999;
  auto bytes = Encode(s);
  StatsResponse back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  EXPECT_EQ(back.objects, 3u);
  EXPECT_EQ(back.exists_keys, 128u);
  EXPECT_EQ(back.exists_ns, 999u);
  bytes.pop_back();
  EXPECT_EQ(Decode(bytes, &back).code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::store

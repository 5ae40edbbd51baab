// The SSD tier's wire messages: round trips, and every truncation or trailing byte rejected.
#include "store/net/ssd_messages.h"

#include <gtest/gtest.h>

#include "common/wire.h"

namespace mooncake::store {
namespace {

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
  EXPECT_EQ(Decode(longer, &out).code(), ErrorCode::kProtocolError);
}

TEST(SsdMessagesTest, SpillRequestAndResponseRoundTrip) {
  SpillRequest m;
  m.entries = {{7, "block/1", 5, 4096, 20480, 0xabcdef}, {8, "block/2", 6, 0, 64, 1}};
  auto bytes = Encode(m);
  SpillRequest back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[0].ticket, 7u);
  EXPECT_EQ(back.entries[0].key, "block/1");
  EXPECT_EQ(back.entries[0].version, 5u);
  EXPECT_EQ(back.entries[0].offset, 4096u);
  EXPECT_EQ(back.entries[0].length, 20480u);
  EXPECT_EQ(back.entries[1].checksum, 1u);
  ExpectRejectsTruncationAndTrailing<SpillRequest>(bytes);

  SpillResponse r;
  r.entries = {{StatusEntry{}, (3ull << 32) | 9}, {StatusEntry{ErrorCode::kBusy, "full"}, 0}};
  auto rb = Encode(r);
  SpillResponse rback;
  ASSERT_TRUE(Decode(rb, &rback).ok());
  EXPECT_EQ(rback.entries[0].location, (3ull << 32) | 9);
  EXPECT_EQ(rback.entries[1].status.code, ErrorCode::kBusy);
  EXPECT_EQ(rback.entries[1].status.message, "full");
  ExpectRejectsTruncationAndTrailing<SpillResponse>(rb);
}

TEST(SsdMessagesTest, PromoteRequestRoundTrips) {
  PromoteRequest m;
  m.entries = {{"k", 3, 128, 4096}};
  auto bytes = Encode(m);
  PromoteRequest back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  EXPECT_EQ(back.entries[0].key, "k");
  EXPECT_EQ(back.entries[0].offset, 128u);
  EXPECT_EQ(back.entries[0].length, 4096u);
  ExpectRejectsTruncationAndTrailing<PromoteRequest>(bytes);
}

TEST(SsdMessagesTest, SsdReadResponseCarriesBytesAndErrors) {
  SsdReadResponse m;
  m.entries.resize(2);
  m.entries[0].bytes = {std::byte{1}, std::byte{2}, std::byte{3}};
  m.entries[1].status = StatusEntry{ErrorCode::kCorrupt, "bad"};
  auto bytes = Encode(m);
  SsdReadResponse back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  EXPECT_EQ(back.entries[0].bytes, m.entries[0].bytes);
  EXPECT_EQ(back.entries[1].status.code, ErrorCode::kCorrupt);
  ExpectRejectsTruncationAndTrailing<SsdReadResponse>(bytes);
}

TEST(SsdMessagesTest, StageRequestResponseAndReleaseRoundTrip) {
  SsdStageRequest q{{"a", "bb"}, {4, 5}, 1};
  auto qb = Encode(q);
  SsdStageRequest qback;
  ASSERT_TRUE(Decode(qb, &qback).ok());
  EXPECT_EQ(qback.keys, q.keys);
  EXPECT_EQ(qback.versions, q.versions);
  EXPECT_EQ(qback.client_verifies, 1);
  ExpectRejectsTruncationAndTrailing<SsdStageRequest>(qb);
  q.client_verifies = 2;  // a flag is 0 or 1
  EXPECT_EQ(Decode(Encode(q), &qback).code(), ErrorCode::kProtocolError);
  q.client_verifies = 1;
  q.versions.pop_back();  // every key names its version
  EXPECT_EQ(Decode(Encode(q), &qback).code(), ErrorCode::kProtocolError);
  q.versions.push_back(5);

  SsdStageResponse m;
  m.ticket = 42;
  m.lease = std::chrono::seconds(10);
  m.staging = {std::byte{9}, std::byte{8}};
  m.entries = {{StatusEntry{}, 0x7f0000001000, 65536},
               {StatusEntry{ErrorCode::kBusy, "full"}, 0, 0}};
  auto bytes = Encode(m);
  SsdStageResponse back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  EXPECT_EQ(back.ticket, 42u);
  EXPECT_EQ(back.lease, std::chrono::seconds(10));
  EXPECT_EQ(back.staging, m.staging);
  EXPECT_EQ(back.entries[0].remote_addr, 0x7f0000001000u);
  EXPECT_EQ(back.entries[0].length, 65536u);
  EXPECT_EQ(back.entries[1].status.code, ErrorCode::kBusy);
  ExpectRejectsTruncationAndTrailing<SsdStageResponse>(bytes);
  m.entries[0].remote_addr = ~uint64_t{0};  // a range that wraps around
  EXPECT_EQ(Decode(Encode(m), &back).code(), ErrorCode::kProtocolError);
  m.entries[0].remote_addr = 0;
  m.lease = Nanos(-1);
  EXPECT_EQ(Decode(Encode(m), &back).code(), ErrorCode::kProtocolError);

  SsdReleaseNotice n{42};
  auto nb = Encode(n);
  SsdReleaseNotice nback;
  ASSERT_TRUE(Decode(nb, &nback).ok());
  EXPECT_EQ(nback.ticket, 42u);
  ExpectRejectsTruncationAndTrailing<SsdReleaseNotice>(nb);
}

TEST(SsdMessagesTest, RecoveredBlocksAndDropNoticeRoundTrip) {
  RecoveredBlocks m;
  m.dropped = 3;
  m.files = 2;
  m.unreadable_files = 1;
  m.dropped_superseded = 2;
  m.max_version = 77;
  m.blocks = {{"a", 1, 10, 11, 12}, {"b", 2, 20, 21, 22}};
  auto bytes = Encode(m);
  RecoveredBlocks back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  EXPECT_EQ(back.dropped, 3u);
  EXPECT_EQ(back.unreadable_files, 1u);
  ASSERT_EQ(back.blocks.size(), 2u);
  EXPECT_EQ(back.blocks[1].key, "b");
  EXPECT_EQ(back.blocks[1].location, 22u);
  EXPECT_EQ(back.blocks[1].version, 2u);
  EXPECT_EQ(back.dropped_superseded, 2u);
  EXPECT_EQ(back.max_version, 77u);
  ExpectRejectsTruncationAndTrailing<RecoveredBlocks>(bytes);

  SsdDropNotice d;
  d.blocks = m.blocks;
  auto db = Encode(d);
  SsdDropNotice dback;
  ASSERT_TRUE(Decode(db, &dback).ok());
  EXPECT_EQ(dback.blocks[0].size, 10u);
  ExpectRejectsTruncationAndTrailing<SsdDropNotice>(db);
}

TEST(SsdMessagesTest, ForgedCountsAreRejectedBeforeAllocating) {
  WireWriter w;
  w.Put<uint32_t>(kMaxBatchKeys);  // claims 4096 entries, carries none
  SpillRequest s;
  EXPECT_EQ(Decode(w.bytes(), &s).code(), ErrorCode::kProtocolError);
  WireWriter r;
  for (int i = 0; i < 6; ++i) r.Put<uint64_t>(0);  // dropped .. max_version
  r.Put<uint32_t>(0);
  r.Put<uint32_t>(0);
  r.Put<uint32_t>(kMaxRecoveredBlocks + 1);
  RecoveredBlocks b;
  EXPECT_EQ(Decode(r.bytes(), &b).code(), ErrorCode::kProtocolError);
}

TEST(SsdMessagesTest, UnknownErrorCodeIsRejected) {
  WireWriter w;
  w.Put<uint32_t>(1);
  w.Put<uint16_t>(0xfff0);
  w.PutString("x");
  w.Put<uint64_t>(0);
  SpillResponse r;
  EXPECT_EQ(Decode(w.bytes(), &r).code(), ErrorCode::kProtocolError);
}

TEST(SsdMessagesTest, TombstoneRequestRoundTripsByteStringKeys) {
  SsdTombstoneRequest m;
  m.entries = {{std::string("nul\0a", 5), 9}, {std::string("\xff\xfe"), 10}};
  auto bytes = Encode(m);
  SsdTombstoneRequest back;
  ASSERT_TRUE(Decode(bytes, &back).ok());
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[0].key, std::string("nul\0a", 5));
  EXPECT_EQ(back.entries[1].version, 10u);
  ExpectRejectsTruncationAndTrailing<SsdTombstoneRequest>(bytes);
}

}  // namespace
}  // namespace mooncake::store

// The serving job's wire messages, declared once (common/wire_fields.h): every field makes the
// round trip, and truncated, trailing, oversized and inconsistent input is refused.
#include "serve/messages.h"
#include "serve/rank_report.h"
#include "transport/transport.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mooncake::serve {
namespace {

PrefillTask SampleTask() {
  PrefillTask t;
  t.request = 7;
  t.attempt = 1;
  t.input_length = 4096;
  t.output_length = 100;
  t.decode_rank = 5;
  t.local_prefix_blocks = 1;
  t.prefix_blocks = 2;
  t.prefix_tokens = 1024;
  t.t_transfer_ns = 123456789;
  t.arrival_wall_ns = -3;
  t.hash_ids = {11, 12, 13, 14};
  return t;
}

TEST(ServeMessages, AClientsPromptTokensMakeTheRoundTripAndMustMatchTheInput) {
  PrefillTask t;
  t.input_length = 3;
  t.hash_ids = {1ull << 63};
  t.prompt_ids = {4, 5, 6};
  auto back = PrefillTask::Decode(t.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->prompt_ids, t.prompt_ids);
  t.input_length = 4;
  EXPECT_FALSE(PrefillTask::Decode(t.Encode()).ok());
}

TEST(ServeMessages, EveryFieldMakesTheRoundTrip) {
  const PrefillTask t = SampleTask();
  auto back = PrefillTask::Decode(t.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->request, 7u);
  EXPECT_EQ(back->attempt, 1u);
  EXPECT_EQ(back->decode_rank, 5);
  EXPECT_EQ(back->prefix_tokens, 1024);
  EXPECT_EQ(back->t_transfer_ns, 123456789);
  EXPECT_EQ(back->arrival_wall_ns, -3);
  EXPECT_EQ(back->hash_ids, t.hash_ids);

  PrefillDone d;
  d.request = 9;
  d.compute_model_s = 0.25;
  d.bytes_to_decode = 1ull << 40;
  auto done = PrefillDone::Decode(d.Encode());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->compute_model_s, 0.25);
  EXPECT_EQ(done->bytes_to_decode, 1ull << 40);
}

TEST(ServeMessages, TruncatedTrailingAndInconsistentInputIsRefused) {
  const auto bytes = SampleTask().Encode();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto r = PrefillTask::Decode(std::span(bytes).first(cut));
    EXPECT_EQ(r.status().code(), ErrorCode::kProtocolError) << "cut at " << cut;
  }
  auto longer = bytes;
  longer.push_back(std::byte{0});
  EXPECT_EQ(PrefillTask::Decode(longer).status().code(), ErrorCode::kProtocolError);

  PrefillTask bad = SampleTask();
  bad.prefix_blocks = 9;  // more than the request has blocks
  auto r = PrefillTask::Decode(bad.Encode());
  EXPECT_EQ(r.status().code(), ErrorCode::kProtocolError);
  EXPECT_NE(r.status().message().find("inconsistent"), std::string::npos);
}

TEST(ServeMessages, KvDoneCarriesOneChecksumPerBlock) {
  KvDone kv;
  kv.hash_ids = {1, 2, 3};
  kv.checksums = {7, 8, 9};
  kv.first_token = 41;
  kv.prefill_start_wall_ns = 123456789;
  auto back = KvDone::Decode(kv.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->checksums, kv.checksums);
  EXPECT_EQ(back->first_token, 41);
  EXPECT_EQ(back->prefill_start_wall_ns, 123456789);
  kv.checksums.pop_back();
  auto r = KvDone::Decode(kv.Encode());
  EXPECT_EQ(r.status().code(), ErrorCode::kProtocolError);
  EXPECT_NE(r.status().message().find("2 checksums for 3 blocks"), std::string::npos);

  DecodeDone d;
  d.output_ids = {5, 6, 7};
  auto dd = DecodeDone::Decode(d.Encode());
  ASSERT_TRUE(dd.ok());
  EXPECT_EQ(dd->output_ids, d.output_ids);
}

// A streamed request's flag travels PrefillTask -> KvDone; DecodeTokens' entries must add up.
TEST(ServeMessages, StreamedTokensMakeTheRoundTripAndInconsistentCountsAreRefused) {
  PrefillTask t = SampleTask();
  t.stream = 1;
  auto task = PrefillTask::Decode(t.Encode());
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(task->stream, 1);
  KvDone kv;
  kv.stream = 1;
  auto done = KvDone::Decode(kv.Encode());
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->stream, 1);

  DecodeTokens d;
  d.decode_rank = 3;
  d.requests = {4, 9};
  d.attempts = {0, 1};
  d.offsets = {1, 7};
  d.counts = {2, 1};
  d.tokens = {10, 11, 12};
  auto back = DecodeTokens::Decode(d.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->requests, d.requests);
  EXPECT_EQ(back->offsets, d.offsets);
  EXPECT_EQ(back->tokens, d.tokens);
  d.tokens.pop_back();
  auto r = DecodeTokens::Decode(d.Encode());
  EXPECT_EQ(r.status().code(), ErrorCode::kProtocolError);
  EXPECT_NE(r.status().message().find("counts add up to 3, 2 tokens sent"), std::string::npos)
      << r.status().ToString();
  d.tokens.push_back(12);
  d.attempts.pop_back();
  EXPECT_EQ(DecodeTokens::Decode(d.Encode()).status().code(), ErrorCode::kProtocolError);
}

TEST(ServeMessages, ACountLargerThanTheMessageIsRefusedBeforeAllocating) {
  KvDone kv;
  kv.hash_ids = {1, 2};
  kv.checksums = {3, 4};
  auto bytes = kv.Encode();
  // checksums is last: its 4-byte count, then two 8-byte values. Claim four billion in a
  // message of a few dozen bytes.
  const size_t count_at = bytes.size() - 2 * sizeof(uint64_t) - sizeof(uint32_t);
  const uint32_t huge = 0xffffffffu;
  std::memcpy(bytes.data() + count_at, &huge, sizeof(huge));
  EXPECT_EQ(KvDone::Decode(bytes).status().code(), ErrorCode::kProtocolError);
}

// A store rank's SSD counters travel by name and are summed counter by counter.
TEST(ServeMessages, SsdCountersMakeTheRoundTripAndAreSummedByName) {
  RankReport one;
  one.ssd.reads_served = 7;
  one.ssd.blocks_on_disk = 11;
  auto back = RankReport::Decode(one.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ssd.reads_served, 7u);
  EXPECT_EQ(back->ssd.blocks_on_disk, 11u);
  EXPECT_EQ(back->ssd.read_failures, 0u);
  RankReport other;
  other.ssd.reads_served = 1;
  other.ssd.dropped_by_lru = 3;
  RankReport all;
  all.Add(*back);
  all.Add(other);
  EXPECT_EQ(all.ssd.reads_served, 8u);
  EXPECT_EQ(all.ssd.dropped_by_lru, 3u);
  EXPECT_EQ(all.ssd.blocks_on_disk, 11u);
}

// Refused data-path messages by sender (issue 28): each rank reports its own, the conductor
// sums them by name, and a report naming more senders than a transport keeps is malformed.
TEST(ServeMessages, RefusalsBySenderMakeTheRoundTripAndAreSummedByName) {
  RankReport one;
  one.SetRefusals({{"unknown", 40}, {"2", 3}});
  EXPECT_EQ(one.refused_data_messages, 43u);
  auto back = RankReport::Decode(one.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->RefusalsByPeer(), (std::map<std::string, uint64_t>{{"2", 3}, {"unknown", 40}}));

  RankReport other;
  other.SetRefusals({{"unknown", 2}, {"attached:127.0.0.1:40000", 5}});
  RankReport all;
  all.Add(*back);
  all.Add(other);
  EXPECT_EQ(all.refused_data_messages, 50u);
  EXPECT_EQ(all.RefusalsByPeer(), (std::map<std::string, uint64_t>{
                                      {"2", 3}, {"attached:127.0.0.1:40000", 5}, {"unknown", 42}}));

  RankReport many;
  std::map<std::string, uint64_t> senders;
  for (size_t i = 0; i < transport::Transport::kMaxRefusalSenders + 2; ++i) {
    senders["unadmitted:10.0.0.1:" + std::to_string(i)] = 1;
  }
  many.SetRefusals(senders);
  EXPECT_EQ(RankReport::Decode(many.Encode()).status().code(), ErrorCode::kProtocolError);
  RankReport long_name;
  long_name.SetRefusals({{std::string(RefusedSender::kMaxName + 1, 'x'), 1}});
  EXPECT_EQ(RankReport::Decode(long_name.Encode()).status().code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::serve

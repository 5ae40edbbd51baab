// How many round trips to the master each client call costs (issue 34): a batch of small
// objects must cost one RPC per phase, whatever the number of keys, so that a 32-key get is one
// round trip. Counted on both ends: the RPCs the client sent (StoreClient::master_calls) and the
// requests the master served (its `requests` counter).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/block_content.h"
#include "loopback_store.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;
constexpr size_t kKeys = 32;
constexpr size_t kValueBytes = 4096;
const uint64_t kTag = ModelTag("round-trips");

struct Counts {
  uint64_t client = 0;  // RPCs the client sent
  uint64_t master = 0;  // requests the master served
};

class RoundTrips : public ::testing::Test {
 protected:
  RoundTrips() : store_(testing::Options(2, 1)) {
    for (size_t i = 0; i < kKeys; ++i) {
      keys_.push_back("small/" + std::to_string(i));
      values_.emplace_back(kValueBytes);
      FillBlockContent({i, 0, kTag}, values_.back());
    }
  }
  StoreClient& client() { return store_.client(0); }
  Counts Now() { return {client().master_calls(), store_.service().Stats().requests}; }
  // Round trips since `before`; both ends must agree.
  uint64_t Since(const Counts& before) {
    const Counts now = Now();
    EXPECT_EQ(now.client - before.client, now.master - before.master)
        << "the client sent a different number of RPCs than the master served";
    return now.client - before.client;
  }
  void PutAll() {
    std::vector<std::span<const std::byte>> in(values_.begin(), values_.end());
    const Counts before = Now();
    for (const Status& s : client().BatchPut(keys_, in)) ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(Since(before), 2u) << "a batch put is PutStart + PutEnd, whatever its size";
  }
  bool Holds(std::span<const std::byte> got, size_t i) {
    return got.size() == kValueBytes && VerifyBlockContent({i, 0, kTag}, got);
  }

  LoopbackStore store_;
  std::vector<std::string> keys_;
  std::vector<std::vector<std::byte>> values_;
};

TEST_F(RoundTrips, BatchGetOf32KeysIntoBuffersIsOneRoundTrip) {
  PutAll();
  std::vector<std::vector<std::byte>> bufs(kKeys, std::vector<std::byte>(kValueBytes));
  std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
  const Counts before = Now();
  auto got = client().BatchGet(keys_, outs);
  EXPECT_EQ(Since(before), 1u);
  for (size_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(got[i].ok()) << keys_[i] << ": " << got[i].status().ToString();
    EXPECT_TRUE(Holds(bufs[i], i)) << keys_[i];
  }
}

// The copying form (Python's batch_get, Client::BatchGet) learns the sizes from the same answer
// that says where to read: one round trip too, not a lookup and then a get.
TEST_F(RoundTrips, BatchGetValuesOf32KeysIsOneRoundTrip) {
  PutAll();
  std::vector<std::string> asked = keys_;
  asked[5] = "small/absent";  // a miss is answered in the same reply
  const Counts before = Now();
  auto got = client().BatchGetValues(asked);
  EXPECT_EQ(Since(before), 1u);
  for (size_t i = 0; i < kKeys; ++i) {
    if (i == 5) {
      EXPECT_EQ(got[i].status().code(), ErrorCode::kNotFound);
      continue;
    }
    ASSERT_TRUE(got[i].ok()) << asked[i] << ": " << got[i].status().ToString();
    EXPECT_TRUE(Holds(*got[i], i)) << asked[i];
  }
}

TEST_F(RoundTrips, SingleGetValueIsOneRoundTrip) {
  PutAll();
  const Counts before = Now();
  auto one = client().GetValue(keys_[3]);
  EXPECT_EQ(Since(before), 1u);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_TRUE(Holds(*one, 3));
  // A miss too, with the error it always had.
  const Counts again = Now();
  EXPECT_EQ(client().GetValue("small/none").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Since(again), 1u);
}

TEST_F(RoundTrips, BatchExistsAndRemoveOf32KeysAreOneRoundTripEach) {
  PutAll();
  Counts before = Now();
  auto exists = client().BatchExists(keys_);
  EXPECT_EQ(Since(before), 1u);
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_EQ(std::count(exists->begin(), exists->end(), 1), static_cast<long>(kKeys));
  store_.clock().Advance(std::chrono::seconds(11));  // the exists' leases run out (10 s)
  before = Now();
  for (const Status& s : client().BatchRemove(keys_)) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Since(before), 1u);
}

}  // namespace
}  // namespace mooncake::store

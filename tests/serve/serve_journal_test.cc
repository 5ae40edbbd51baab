// The serving state's journal (serve/serve_journal.h) and the standby's copy of it
// (serve/serve_standby.h): a batch makes the round trip and truncated input is refused; the
// standby takes only the active's batches, keeps the newest state of each request whatever the
// order batches arrive in, and nothing after its promotion.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "serve/serve_journal.h"
#include "serve/serve_standby.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::serve {
namespace {

RequestState Request(uint64_t id, uint32_t attempt, bool resolved) {
  RequestState r;
  r.id = id;
  r.attempt = attempt;
  r.dispatched = 1;
  r.resolved = resolved ? 1 : 0;
  r.prefill = 1;
  r.decode = 0;
  r.reject_reason = resolved ? "" : "none yet";
  r.ttft_s = 0.25;
  if (resolved) r.output_ids = {3, 4, 5};
  return r;
}

ServeJournalBatch Batch(uint64_t seq, uint64_t replay_next, std::vector<RequestState> requests) {
  ServeJournalBatch b;
  b.seq = seq;
  b.replay_next = replay_next;
  b.start_wall_ns = 123456789;
  b.run_dir = "/tmp/run";
  b.totals = {1, 2, 3};
  b.requests = std::move(requests);
  return b;
}

TEST(ServeJournal, ABatchMakesTheRoundTripAndTruncatedInputIsRefused) {
  const ServeJournalBatch b = Batch(3, 9, {Request(4, 16, true), Request(5, 0, false)});
  const std::vector<std::byte> bytes = b.Encode();
  auto back = ServeJournalBatch::Decode(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->seq, 3u);
  EXPECT_EQ(back->replay_next, 9u);
  EXPECT_EQ(back->start_wall_ns, 123456789);
  EXPECT_EQ(back->run_dir, "/tmp/run");
  EXPECT_EQ(back->totals, (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_EQ(back->requests.size(), 2u);
  EXPECT_EQ(back->requests[0].attempt, 16u);
  EXPECT_EQ(back->requests[0].output_ids, (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(back->requests[1].reject_reason, "none yet");
  EXPECT_DOUBLE_EQ(back->requests[1].ttft_s, 0.25);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ServeJournalBatch::Decode(std::span(bytes).first(n)).ok()) << n << " bytes";
  }
}

class ServeFollowerTest : public ::testing::Test {
 protected:
  ServeFollowerTest() {
    transports_ = transport::CreateLoopbackCluster(3, &hub_);
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    follower_ = std::make_unique<ServeFollower>(*rpcs_[1], Rank{0});
    follower_->Start();
  }
  ~ServeFollowerTest() override {
    for (auto& r : rpcs_) r->Stop();
  }
  void Send(int from, const ServeJournalBatch& b) {
    ASSERT_TRUE(rpcs_[from]->Notify(Rank{1}, kMsgServeJournal, b.Encode()).ok());
  }
  // Waits until the follower applied `n` batches (at most 5 s).
  bool Applied(uint64_t n) {
    for (int i = 0; i < 500 && follower_->batches() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return follower_->batches() == n;
  }

  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  std::unique_ptr<ServeFollower> follower_;
};

TEST_F(ServeFollowerTest, TheNewestStateOfEachRequestIsKeptFromTheActiveOnly) {
  Send(0, Batch(2, 6, {Request(4, 0, true)}));
  Send(0, Batch(1, 5, {Request(4, 0, false), Request(5, 0, false)}));  // older, late
  Send(2, Batch(3, 9, {Request(5, 1, true)}));                         // not the active's
  ASSERT_TRUE(Applied(2));
  Send(0, Batch(3, 7, {Request(5, 0, true)}));
  ASSERT_TRUE(Applied(3));
  const ServeState s = follower_->Promote();
  EXPECT_EQ(s.replay_next, 7u);
  EXPECT_EQ(s.run_dir, "/tmp/run");
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_TRUE(s.requests.at(4).resolved);  // the late older batch did not undo it
  EXPECT_EQ(s.requests.at(4).output_ids, (std::vector<int32_t>{3, 4, 5}));
  EXPECT_TRUE(s.requests.at(5).resolved);
  EXPECT_EQ(s.requests.at(5).attempt, 0u);  // rank 2's batch was not taken
  // Promoted: the old active's later batches change nothing.
  Send(0, Batch(4, 8, {Request(6, 0, false)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(follower_->batches(), 3u);
}

}  // namespace
}  // namespace mooncake::serve

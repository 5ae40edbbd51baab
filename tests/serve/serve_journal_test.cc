// The serving state's journal (serve/serve_journal.h) and the standby's copy of it
// (serve/serve_standby.h): a batch makes the round trip and truncated input is refused; the
// standby takes only the active's batches, keeps the newest state of each request whatever the
// order batches arrive in, and nothing after its promotion; the conductor it becomes resolves
// what was in flight (ConductorRole::Restore, ResolveInFlight).
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "conductor/scheduler.h"
#include "engine/kv_layout.h"
#include "serve/conductor_role.h"
#include "serve/messages.h"
#include "serve/serve_journal.h"
#include "serve/serve_standby.h"
#include "support/paper_cost_model.h"
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

// A standby that took over (ConductorRole::Restore, then ResolveInFlight): a request the old
// conductor resolved is counted; one whose task was sent to live ranks is left to finish; one it
// decided and had not sent (here: never journaled) and one held by a dead decode rank are
// dispatched again with an attempt number the old conductor never used, so the old attempt's
// report is stale.
TEST(ConductorTakeover, RequestsNotSentOrHeldByADeadRankAreDispatchedAgainUnderANewAttempt) {
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(4, &hub);
  std::vector<std::unique_ptr<transport::Rpc>> rpcs;
  for (auto& t : transports) rpcs.push_back(std::make_unique<transport::Rpc>(*t));
  std::mutex mu;
  std::vector<PrefillTask> tasks;  // what rank 1 (the prefill instance) was given
  ASSERT_TRUE(rpcs[1]
                  ->Register(kMsgPrefillTask,
                             [&](Rank, std::span<const std::byte> bytes, transport::Responder) {
                               auto t = PrefillTask::Decode(bytes);
                               std::lock_guard<std::mutex> lock(mu);
                               if (t.ok()) tasks.push_back(*t);
                             })
                  .ok());
  const engine::CostModel cost = testing::Llama70bA800();
  const engine::KvLayout layout(cost, 1.0 / 8192, "llama3-70b");
  ServeConfig config;
  config.time_scale = 4;
  // Ranks: 0 conductor, 1 prefill, 2 and 3 decode (3 is dead).
  ServeContext ctx{*transports[0], *rpcs[0], ServePeers{Rank{0}, Rank{0}, {1}, {2, 3}},
                   config,         cost,     layout};
  std::vector<trace::TraceRequest> requests(4);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].id = RequestId{i};
    requests[i].timestamp_ms = static_cast<int64_t>(i) * 100;
    requests[i].input_length = 1024;
    requests[i].output_length = 8;
    requests[i].hash_ids = {BlockHash{10 * i + 1}, BlockHash{10 * i + 2}};
  }
  conductor::SchedulerConfig sc;
  sc.prefill_instances = 1;
  sc.decode_instances = 2;
  conductor::Scheduler scheduler(sc, &cost);
  ConductorRole role(ctx, requests, scheduler);

  ServeState state;
  state.replay_next = 4;  // requests 0-3 were decided by the old conductor
  RequestState done = Request(0, 0, true);
  done.outcome = static_cast<uint8_t>(trace::Outcome::kCompleted);
  RequestState sent = Request(1, 0, false);
  RequestState on_dead_decode = Request(3, 1, false);  // re-dispatched once already
  on_dead_decode.redispatches = 1;
  on_dead_decode.decode = 1;
  state.requests = {{0, done}, {1, sent}, {3, on_dead_decode}};  // 2: never journaled
  role.Restore(state);
  role.Start();
  EXPECT_EQ(role.records()[0].outcome, trace::Outcome::kCompleted);
  EXPECT_EQ(role.ResolveInFlight({Rank{3}}), 2u);
  EXPECT_GT(role.first_decision_at(), Nanos(0));
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (tasks.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].request, 2u);
    EXPECT_EQ(tasks[0].attempt, 16u);
    EXPECT_EQ(tasks[0].decode_rank, 2);  // never the dead decode rank
    EXPECT_EQ(tasks[1].request, 3u);
    EXPECT_EQ(tasks[1].attempt, 17u);
    EXPECT_EQ(tasks[1].decode_rank, 2);
  }
  EXPECT_EQ(role.totals().takeover_redispatched, 2u);
  // The old conductor's attempt of request 2 reports: stale, ignored.
  PrefillDone old;
  old.request = 2;
  old.attempt = 0;
  ASSERT_TRUE(rpcs[1]->Notify(Rank{0}, kMsgPrefillDone, old.Encode()).ok());
  for (int i = 0; i < 500 && role.totals().stale_reports == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(role.totals().stale_reports, 1u);
  EXPECT_FALSE(role.records()[2].prefilled);
  EXPECT_EQ(role.LostRequests(), (std::vector<uint64_t>{1, 2, 3}));  // still open
  for (auto& r : rpcs) r->Stop();
}

}  // namespace
}  // namespace mooncake::serve

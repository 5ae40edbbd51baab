// The failure detector and the heartbeat sender over the loopback transport: deaths and joins
// reach every live rank, the conductor is whichever rank the membership names (rank 1 here),
// and a slow heartbeat reply does not cost a rank its life.
#include "cluster/failure_detector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "cluster/heartbeat_sender.h"
#include "transport/forwarding_transport.h"
#include "transport/loopback/loopback_transport.h"
#include "transport/rpc.h"

namespace mooncake::cluster {
namespace {

using std::chrono::milliseconds;
using transport::Responder;
using transport::Rpc;

constexpr MembershipConfig kFast{milliseconds(20), milliseconds(400)};

// Waits up to 20 s (a loaded machine) for `done`.
template <typename Pred>
bool Eventually(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

class FailureDetectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    transports_ = transport::CreateLoopbackCluster(4, &hub_);
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<Rpc>(*t));
  }
  // Rank 1 conducts; ranks 0 and 2 are members, rank 3 is not (yet).
  static Membership Initial() {
    return Membership(Rank{1}, {{Rank{0}, Role::kStore}, {Rank{2}, Role::kDecode}});
  }
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<Rpc>> rpcs_;
};

TEST_F(FailureDetectorTest, ASilentRankIsDeclaredDeadByAConductorOnRank1AndEveryRankLearnsIt) {
  FailureDetector detector(*rpcs_[1], Initial(), kFast);
  std::atomic<int> deaths{0};
  detector.OnDeath([&](const DeadRank& d) {
    EXPECT_EQ(d.rank.value, 2);
    ++deaths;
  });
  HeartbeatSender zero(*rpcs_[0], Initial(), kFast);
  HeartbeatSender two(*rpcs_[2], Initial(), kFast);
  std::atomic<bool> zero_lost{false};
  zero.OnConductorLost([&](const Status&) { zero_lost = true; });
  detector.Start();
  zero.Start();
  two.Start();
  std::this_thread::sleep_for(milliseconds(100));
  two.Stop();  // rank 2 goes silent
  ASSERT_TRUE(Eventually([&] { return deaths.load() == 1; }));
  ASSERT_TRUE(Eventually([&] { return zero.epoch() == 1; }));
  const Membership seen = zero.membership();
  EXPECT_TRUE(seen.IsDead(Rank{2}));
  EXPECT_EQ(seen.conductor().value, 1);
  // Fenced on rank 0 too: the sender publishes the epoch first and fences the dead after.
  EXPECT_TRUE(Eventually([&] { return rpcs_[0]->IsDead(Rank{2}); }));
  EXPECT_FALSE(zero_lost.load());
  EXPECT_EQ(detector.view().live, (std::vector<int32_t>{0, 1}));
}

// A heartbeat that arrives after the conductor's detector is gone (a rank ending while others
// still beat) must not reach it: the handler is removed with the detector, so the call fails
// instead of reading a freed membership, and a new detector can take the id again.
TEST_F(FailureDetectorTest, AHeartbeatAfterTheDetectorIsGoneDoesNotReachIt) {
  auto detector = std::make_unique<FailureDetector>(*rpcs_[1], Initial(), kFast);
  detector->Start();
  EXPECT_TRUE(rpcs_[0]->Call(Rank{1}, kMsgHeartbeat, {}, milliseconds(2000)).ok());
  detector.reset();
  EXPECT_FALSE(rpcs_[0]->Call(Rank{1}, kMsgHeartbeat, {}, milliseconds(300)).ok());
  FailureDetector again(*rpcs_[1], Initial(), kFast);
  again.Start();  // refused (the process ends) while the first one's handler is still there
  EXPECT_TRUE(rpcs_[0]->Call(Rank{1}, kMsgHeartbeat, {}, milliseconds(2000)).ok());
}

// A transport that, like UCX, may deliver an incoming message on the thread that is sending
// (UCX's SendMessage drives the worker's progress, which runs receive callbacks): the first
// message it received is delivered once more from inside the next send.
class DeliversWhileSending : public transport::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  void SetMessageHandler(transport::MessageHandler h) override {
    handler_ = std::move(h);
    inner_.SetMessageHandler([this](Rank from, std::span<const std::byte> bytes) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!kept_) {
          kept_ = true;
          again_from_ = from;
          again_.assign(bytes.begin(), bytes.end());
        }
      }
      handler_(from, bytes);
    });
  }
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override {
    std::vector<std::byte> again;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      again.swap(again_);
    }
    if (!again.empty()) {
      // Counted before the delivery: its answer wakes the caller, who may read the count
      // before the handler returns here.
      ++delivered_while_sending;
      handler_(again_from_, again);
    }
    return inner_.SendMessage(peer, payload);
  }

  std::atomic<int> delivered_while_sending{0};

 private:
  transport::MessageHandler handler_;
  std::mutex mutex_;
  bool kept_ = false;
  Rank again_from_;
  std::vector<std::byte> again_;
};

// The conductor answers a heartbeat whose answer's send delivers another heartbeat to the same
// handler on the same thread (UCX does this): both are answered. The handler once held its gate
// while answering and the rank deadlocked on itself, its heartbeats unanswered from then on
// (every rank of the job then ended, each naming the conductor).
TEST_F(FailureDetectorTest, AHeartbeatDeliveredWhileAnsweringAnotherIsAnswered) {
  rpcs_[1].reset();  // rank 1's messages go to the Rpc below
  DeliversWhileSending reentrant(*transports_[1]);
  Rpc conductor_rpc(reentrant);
  FailureDetector detector(conductor_rpc, Initial(), kFast);
  detector.Start();
  EXPECT_TRUE(rpcs_[0]->Call(Rank{1}, kMsgHeartbeat, {}, milliseconds(2000)).ok());
  EXPECT_EQ(reentrant.delivered_while_sending.load(), 1);
  EXPECT_TRUE(rpcs_[0]->Call(Rank{1}, kMsgHeartbeat, {}, milliseconds(2000)).ok());
}

TEST_F(FailureDetectorTest, AJoinedRankIsWatchedAndKnownToTheOthers) {
  FailureDetector detector(*rpcs_[1], Initial(), kFast);
  HeartbeatSender zero(*rpcs_[0], Initial(), kFast);
  HeartbeatSender two(*rpcs_[2], Initial(), kFast);
  detector.Start();
  zero.Start();
  two.Start();
  ASSERT_TRUE(detector.Admit(Rank{3}, Role::kStore).ok());
  EXPECT_EQ(detector.Admit(Rank{3}, Role::kStore).code(), ErrorCode::kAlreadyExists);
  ASSERT_TRUE(Eventually([&] { return zero.membership().IsLive(Rank{3}); }));
  EXPECT_EQ(zero.membership().RoleOf(Rank{3}), Role::kStore);
  EXPECT_GE(zero.epoch(), 1u);
  // The joined rank never sends a heartbeat: it is watched like the others, so it dies.
  ASSERT_TRUE(Eventually([&] { return two.membership().IsDead(Rank{3}); }));
  EXPECT_EQ(two.epoch(), 2u);
  EXPECT_TRUE(detector.dead().size() == 1 && detector.dead()[0].rank.value == 3);
}

TEST_F(FailureDetectorTest, ARetiredRankIsNoLongerWatchedNorDeadAndTheOthersLearnIt) {
  FailureDetector detector(*rpcs_[1], Initial(), kFast);
  std::atomic<int> deaths{0};
  detector.OnDeath([&](const DeadRank&) { ++deaths; });
  HeartbeatSender zero(*rpcs_[0], Initial(), kFast);
  HeartbeatSender two(*rpcs_[2], Initial(), kFast);
  detector.Start();
  zero.Start();
  two.Start();
  ASSERT_TRUE(detector.Retire(Rank{2}));  // a drained store rank, told to leave
  EXPECT_FALSE(detector.Retire(Rank{2}));
  EXPECT_FALSE(detector.Retire(Rank{1}));  // the conductor does not leave
  two.Stop();                              // it leaves: no more heartbeats
  ASSERT_TRUE(Eventually([&] { return !zero.membership().IsLive(Rank{2}); }));
  EXPECT_FALSE(zero.membership().IsDead(Rank{2}));
  std::this_thread::sleep_for(kFast.failure_timeout * 2);  // long enough to be declared dead
  EXPECT_EQ(deaths.load(), 0);
  EXPECT_TRUE(detector.dead().empty());
  EXPECT_EQ(detector.view().live, (std::vector<int32_t>{0, 1}));
}

// The view a conductor of our own answers heartbeats with: rank 1 conducts, rank 0 stores.
MembershipView RankOneConductsRankZero() {
  MembershipView view;
  view.conductor = 1;
  view.live = {0, 1};
  view.roles = {static_cast<uint8_t>(Role::kStore), static_cast<uint8_t>(Role::kConductor)};
  return view;
}

// A conductor of our own: it answers every heartbeat at once except the first, which it holds
// for three failure timeouts (a reply stuck behind a loaded conductor), and counts them.
class SlowFirstReply {
 public:
  explicit SlowFirstReply(Rpc& rpc) {
    EXPECT_TRUE(rpc.RegisterInline(kMsgHeartbeat,
                                   [this](Rank, std::span<const std::byte>, Responder r) {
                                     std::lock_guard<std::mutex> lock(mutex_);
                                     if (++heartbeats_ == 1) {
                                       held_ = r;
                                       return;
                                     }
                                     r.Reply(view_.Encode());
                                   })
                    .ok());
  }
  int heartbeats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return heartbeats_;
  }
  void ReleaseHeld() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_.Reply(view_.Encode());
  }

 private:
  std::mutex mutex_;
  int heartbeats_ = 0;
  Responder held_;
  const MembershipView view_ = RankOneConductsRankZero();
};

TEST_F(FailureDetectorTest, ASlowReplyNeitherSilencesNorKillsTheRank) {
  SlowFirstReply conductor(*rpcs_[1]);
  HeartbeatSender sender(*rpcs_[0], Initial(), kFast);
  std::atomic<bool> lost{false};
  std::string why;
  sender.OnConductorLost([&](const Status& s) {
    why = s.ToString();
    lost = true;
  });
  sender.Start();
  // Heartbeats keep going out while the first reply is held.
  ASSERT_TRUE(Eventually([&] { return conductor.heartbeats() >= 5 || lost.load(); }));
  EXPECT_GE(conductor.heartbeats(), 5);
  ASSERT_FALSE(lost.load()) << why;
  std::this_thread::sleep_for(kFast.failure_timeout * 3);
  EXPECT_FALSE(lost.load()) << why;
  conductor.ReleaseHeld();  // a reply older than the rest changes nothing
  std::this_thread::sleep_for(kFast.heartbeat_interval * 5);
  EXPECT_FALSE(lost.load()) << why;
  sender.Stop();
}

TEST_F(FailureDetectorTest, AConductorThatAnswersNothingIsLostAfterTheFailureTimeout) {
  EXPECT_TRUE(
      rpcs_[1]
          ->RegisterInline(kMsgHeartbeat, [](Rank, std::span<const std::byte>, Responder) {})
          .ok());
  HeartbeatSender sender(*rpcs_[0], Initial(), kFast);
  std::atomic<bool> lost{false};
  std::string why;
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration after{};
  sender.OnConductorLost([&](const Status& s) {
    why = s.ToString();
    after = std::chrono::steady_clock::now() - start;
    lost = true;
  });
  sender.Start();
  ASSERT_TRUE(Eventually([&] { return lost.load(); }));
  EXPECT_GE(after, kFast.failure_timeout);
  EXPECT_NE(why.find("the conductor (rank 1) did not answer heartbeats"), std::string::npos) << why;
  EXPECT_NE(why.find("(none was ever answered)"), std::string::npos) << why;
}

TEST_F(FailureDetectorTest, AConductorKnownToHaveDiedIsLostAtOnceNotAfterTheFailureTimeout) {
  // A silent conductor and a failure timeout far beyond the test's waits: only the evidence of a
  // death (the liveness link's end, cluster/liveness_link.h) can end the wait in time.
  ASSERT_TRUE(
      rpcs_[1]
          ->RegisterInline(kMsgHeartbeat, [](Rank, std::span<const std::byte>, Responder) {})
          .ok());
  const MembershipConfig slow{milliseconds(20), std::chrono::seconds(60)};
  HeartbeatSender sender(*rpcs_[0], Initial(), slow);
  std::atomic<bool> lost{false};
  std::string why;
  sender.OnConductorLost([&](const Status& s) {
    why = s.ToString();
    lost = true;
  });
  sender.Start();
  sender.ConductorDied(Rank{2}, "not the conductor");  // about another rank: changes nothing
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(lost.load()) << why;
  sender.ConductorDied(Rank{1}, "its liveness connection was closed (the process ended)");
  ASSERT_TRUE(Eventually([&] { return lost.load(); }));
  EXPECT_NE(why.find("the conductor (rank 1) died: its liveness connection was closed"),
            std::string::npos)
      << why;
  EXPECT_FALSE(sender.fenced());
}

// Starts `sender` and waits (Eventually) until it loses its conductor: why, or empty when it
// did not.
std::string StartAndWaitForLoss(HeartbeatSender& sender) {
  struct Lost {
    std::mutex mutex;
    std::string why;
  };
  auto lost = std::make_shared<Lost>();  // the handler may outlive this call when it times out
  sender.OnConductorLost([lost](const Status& s) {
    std::lock_guard<std::mutex> lock(lost->mutex);
    lost->why = s.ToString();
  });
  sender.Start();
  auto why = [&] {
    std::lock_guard<std::mutex> lock(lost->mutex);
    return lost->why;
  };
  Eventually([&] { return !why().empty(); });
  return why();
}

// A conductor that answered and then fell silent: the rank's reason says how long it was silent
// and does not claim that no heartbeat was ever answered.
TEST_F(FailureDetectorTest, AConductorThatFallsSilentIsLostWithoutClaimingItNeverAnswered) {
  // Shared with the handler, which the fixture's Rpc keeps past this test's locals.
  struct Conductor {
    const MembershipView view = RankOneConductsRankZero();
    std::atomic<int> answered{0};
  };
  auto c = std::make_shared<Conductor>();
  EXPECT_TRUE(rpcs_[1]
                  ->RegisterInline(kMsgHeartbeat,
                                   [c](Rank, std::span<const std::byte>, Responder r) {
                                     if (c->answered.load() < 3) {
                                       ++c->answered;
                                       r.Reply(c->view.Encode());
                                     }
                                   })
                  .ok());
  HeartbeatSender sender(*rpcs_[0], Initial(), kFast);
  const std::string why = StartAndWaitForLoss(sender);
  EXPECT_EQ(c->answered.load(), 3);
  EXPECT_NE(why.find("the conductor (rank 1) did not answer heartbeats for"), std::string::npos)
      << why;
  // Neither wording of "no heartbeat was answered" (the text before this test) fits here.
  EXPECT_EQ(why.find("no heartbeat was answered"), std::string::npos) << why;
  EXPECT_EQ(why.find("none was ever answered"), std::string::npos) << why;
}

TEST_F(FailureDetectorTest, AFencedRankLearnsItFromTheReplyToItsHeartbeat) {
  FailureDetector detector(*rpcs_[1], Initial(), kFast);
  detector.Start();
  detector.DeclareDead(Rank{2}, "a test");
  HeartbeatSender two(*rpcs_[2], Initial(), kFast);
  const std::string why = StartAndWaitForLoss(two);
  EXPECT_NE(why.find("fenced"), std::string::npos) << why;
}

// The rank's own heartbeat thread stalls inside the send of its `nth` heartbeat for `stall`, and
// that heartbeat never leaves: a process stopped (SIGSTOP) while it was sending.
class StallsOneHeartbeat : public transport::ForwardingTransport {
 public:
  StallsOneHeartbeat(transport::Transport& inner, int nth, Nanos stall)
      : ForwardingTransport(inner), nth_(nth), stall_(stall) {}
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override {
    auto frame = transport::DecodeFrame(payload);
    if (frame.ok() && frame->kind == transport::FrameKind::kRequest &&
        frame->type == static_cast<uint16_t>(kMsgHeartbeat) && ++heartbeats_ == nth_) {
      std::this_thread::sleep_for(stall_);
      return Status::Ok();
    }
    return inner_.SendMessage(peer, payload);
  }

 private:
  const int nth_;
  const Nanos stall_;
  std::atomic<int> heartbeats_{0};
};

// A rank that stalled while sending a heartbeat, and was declared dead meanwhile, learns from its
// next heartbeat that it was fenced. The silence was its own: judged before it asked again, the
// stall counted against the conductor and the rank ended "the conductor did not answer" (CI:
// mpi_fault_store_stop, whose stopped rank must end fenced).
TEST_F(FailureDetectorTest, ARankStalledWhileSendingLearnsItWasFencedNotThatTheConductorIsSilent) {
  FailureDetector detector(*rpcs_[1], Initial(), kFast);
  detector.Start();
  rpcs_[2].reset();  // rank 2's messages go to the Rpc below
  StallsOneHeartbeat stalls(*transports_[2], 5, kFast.failure_timeout * 3);
  Rpc rank2(stalls);
  HeartbeatSender two(rank2, Initial(), kFast);
  const std::string why = StartAndWaitForLoss(two);
  EXPECT_TRUE(rpcs_[1]->IsDead(Rank{2}));  // (rank 0 sends none here: dead too)
  EXPECT_NE(why.find("fenced"), std::string::npos) << why;
  EXPECT_TRUE(two.fenced());
  two.Stop();
}

}  // namespace
}  // namespace mooncake::cluster

#include "transport/rpc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "transport/forwarding_transport.h"
#include "transport/join_slots.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::transport {
namespace {

using std::chrono::milliseconds;

std::span<const std::byte> AsBytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}
std::string AsString(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

TEST(RpcTest, CallGetsTheHandlersReply) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  EXPECT_TRUE(b.Register(7, [](Rank from, std::span<const std::byte> req, Responder r) {
                 std::string text(reinterpret_cast<const char*>(req.data()), req.size());
                 std::string reply = text + " from " + std::to_string(from.value);
                 r.Reply(AsBytes(reply));
               }).ok());
  auto res = a.Call(Rank{1}, 7, AsBytes("ping"), milliseconds(10000));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(AsString(*res), "ping from 0");
}

TEST(RpcTest, HandlerErrorsAndUnknownTypesComeBackAsStatus) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  EXPECT_TRUE(b.Register(1, [](Rank, std::span<const std::byte>, Responder r) {
                 r.Fail(NotFound("key x"));
               }).ok());
  auto res = a.Call(Rank{1}, 1, {}, milliseconds(10000));
  EXPECT_EQ(res.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(res.status().message().find("rank 1"), std::string::npos);
  auto unknown = a.Call(Rank{1}, 99, {}, milliseconds(10000));
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotSupported);
}

TEST(RpcTest, SilentPeerTimesOutNamingIt) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  EXPECT_TRUE(
      b.Register(3, [](Rank, std::span<const std::byte>, Responder) { /* never answers */ }).ok());
  auto res = a.Call(Rank{1}, 3, {}, milliseconds(30));
  EXPECT_EQ(res.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(res.status().message().find("rank 1"), std::string::npos);
}

TEST(RpcTest, MalformedFramesAreCountedAndDropped) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  std::vector<std::byte> junk(5, std::byte{0x55});
  ASSERT_TRUE(ranks[0]->SendMessage(Rank{1}, junk).ok());
  // A good call afterwards still works: the junk did not wedge the receiver.
  EXPECT_TRUE(
      b.Register(2, [](Rank, std::span<const std::byte>, Responder r) { r.Reply({}); }).ok());
  EXPECT_TRUE(a.Call(Rank{1}, 2, {}, milliseconds(10000)).ok());
  EXPECT_EQ(b.malformed_frames(), 1u);
}

// The job token (docs/RELIABILITY.md): a frame with another token, or the older format without
// one, reaches no handler; it is counted for the rank it claims and logged once per rank.
TEST(RpcTest, FramesWithoutTheJobTokenReachNoHandler) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(3, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]), foreign(*ranks[2]);
  const JobToken job = DrawJobToken();
  a.SetJobToken(job);
  b.SetJobToken(job);
  foreign.SetJobToken(JobToken{job.hi, job.lo ^ 1});  // one bit off
  std::atomic<int> handled{0};
  EXPECT_TRUE(b.Register(5, [&](Rank, std::span<const std::byte>, Responder r) {
                 ++handled;
                 r.Reply({});
               }).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(foreign.Notify(Rank{1}, 5, AsBytes("stop")).ok());
  auto refused_call = foreign.Call(Rank{1}, 5, {}, milliseconds(50));
  EXPECT_EQ(refused_call.status().code(), ErrorCode::kTimeout)
      << "a refused call is never answered";
  // The format before the token: magic "MR", no token field.
  std::vector<std::byte> old_format = {std::byte{0x52}, std::byte{0x4d}, std::byte{3}};
  old_format.resize(19, std::byte{0});
  ASSERT_TRUE(ranks[2]->SendMessage(Rank{1}, old_format).ok());
  // The job's own traffic goes on.
  ASSERT_TRUE(a.Call(Rank{1}, 5, {}, milliseconds(10000)).ok());
  EXPECT_EQ(handled.load(), 1) << "only the call with the job's token was handled";
  EXPECT_EQ(b.refused_frames(), 12u);
  EXPECT_EQ(b.refused_frames_from(Rank{2}), 12u);
  EXPECT_EQ(b.refused_frames_from(Rank{0}), 0u);
  EXPECT_EQ(b.malformed_frames(), 0u);
}

TEST(RpcTest, JobTokensAreDrawnNotFixed) {
  const JobToken x = DrawJobToken(), y = DrawJobToken();
  EXPECT_FALSE(x == y);
  EXPECT_FALSE(x == JobToken{});
  EXPECT_EQ(x.Hex().size(), 32u);
}

TEST(RpcFrameTokenTest, TheTokenTravelsInTheFrame) {
  const JobToken t{0x1122334455667788ull, 0x99aabbccddeeff00ull};
  auto frame = EncodeFrame(FrameKind::kOneWay, 3, ErrorCode::kOk, 0, AsBytes("x"), t);
  auto decoded = DecodeFrame(frame);
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->token == t);
  EXPECT_FALSE(FrameLacksToken(frame));
}

// CallAsync's handler runs once, whatever ends the call: the reply, the peer's death, the
// deadline (found at the next CallAsync).
class AsyncOutcomes {
 public:
  Rpc::ReplyHandler Handler() {
    return [this](Result<std::vector<std::byte>> r) {
      std::lock_guard<std::mutex> lock(mutex_);
      outcomes_.push_back(r.ok() ? "ok " + AsString(*r) : r.status().ToString());
    };
  }
  std::vector<std::string> Wait(size_t n) {
    for (int i = 0; i < 4000 && Count() < n; ++i) std::this_thread::sleep_for(milliseconds(5));
    std::lock_guard<std::mutex> lock(mutex_);
    return outcomes_;
  }

 private:
  size_t Count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return outcomes_.size();
  }
  std::mutex mutex_;
  std::vector<std::string> outcomes_;
};

TEST(RpcTest, CallAsyncRunsItsHandlerOnceWithTheReply) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  EXPECT_TRUE(b.RegisterInline(7, [](Rank, std::span<const std::byte> req, Responder r) {
                 r.Reply(req);
               }).ok());
  AsyncOutcomes out;
  a.CallAsync(Rank{1}, 7, AsBytes("one"), milliseconds(5000), out.Handler());
  a.CallAsync(Rank{1}, 7, AsBytes("two"), milliseconds(5000), out.Handler());
  auto seen = out.Wait(2);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"ok one", "ok two"}));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(out.Wait(2).size(), 2u);
}

TEST(RpcTest, CallAsyncFailsOnTheDeathOfItsPeerAndAtItsDeadline) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  EXPECT_TRUE(
      b.RegisterInline(3, [](Rank, std::span<const std::byte>, Responder) { /* never answers */ })
          .ok());
  AsyncOutcomes expired;
  a.CallAsync(Rank{1}, 3, {}, milliseconds(10), expired.Handler());
  std::this_thread::sleep_for(milliseconds(30));
  AsyncOutcomes open;
  a.CallAsync(Rank{1}, 3, {}, milliseconds(60'000), open.Handler());  // sweeps the expired one
  auto timed_out = expired.Wait(1);
  ASSERT_EQ(timed_out.size(), 1u);
  EXPECT_NE(timed_out[0].find("Timeout: rank 1 did not answer rpc type 3 within 10 ms"),
            std::string::npos)
      << timed_out[0];
  a.MarkDead(Rank{1}, "a test");
  auto died = open.Wait(1);
  ASSERT_EQ(died.size(), 1u);
  EXPECT_NE(died[0].find("PeerFailure: rank 1: declared dead (a test)"), std::string::npos)
      << died[0];
  AsyncOutcomes after;
  a.CallAsync(Rank{1}, 3, {}, milliseconds(60'000), after.Handler());
  auto at_once = after.Wait(1);
  ASSERT_EQ(at_once.size(), 1u);
  EXPECT_NE(at_once[0].find("rank 1 is dead (a test)"), std::string::npos) << at_once[0];
}

// A transport whose job has `world` ranks as far as the Rpc asks, over a loopback rank: it
// plays a job that grew after the Rpc was made.
class GrowingWorld : public ForwardingTransport {
 public:
  GrowingWorld(Transport& inner, int world) : ForwardingTransport(inner), world_(world) {}
  void Grow(int world) { world_ = world; }
  int world_size() const override { return world_.load(); }

 private:
  std::atomic<int> world_;
};

TEST(RpcTest, AJoinedStoreRanksSlotIsFencedAndAnAttachedProcessAboveTheSlotsIsNot) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]);
  a.MarkDead(Rank{2 + 7}, "a joined store rank stalled");
  EXPECT_TRUE(a.IsDead(Rank{2 + 7}));
  EXPECT_EQ(a.Call(Rank{2 + 7}, 5, {}, milliseconds(10000)).status().code(),
            ErrorCode::kPeerFailure);
  a.MarkDead(Rank{2 + kMaxJoinedRanks}, "a client");  // the first attached number
  EXPECT_FALSE(a.IsDead(Rank{2 + kMaxJoinedRanks}));
}

TEST(RpcTest, RanksBeyondTheWorldAtStartAreFencedAndCounted) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(4, &hub);
  GrowingWorld grown(*ranks[0], 2);
  Rpc a(grown);
  grown.Grow(4);  // ranks 2 and 3 joined after the Rpc was made
  Rpc two(*ranks[2]), three(*ranks[3]);
  a.SetJobToken(DrawJobToken());
  three.SetJobToken(a.job_token());
  ASSERT_TRUE(two.Notify(Rank{0}, 5, AsBytes("no token")).ok());
  // The per-peer count is the one asserted, and Refuse bumps it after the total.
  for (int i = 0; i < 4000 && a.refused_frames_from(Rank{2}) == 0; ++i)
    std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(a.refused_frames_from(Rank{2}), 1u);
  a.MarkDead(Rank{3}, "a test");
  EXPECT_TRUE(a.IsDead(Rank{3}));
  EXPECT_FALSE(a.IsDead(Rank{2}));
  auto call = a.Call(Rank{3}, 5, {}, milliseconds(10000));
  EXPECT_EQ(call.status().code(), ErrorCode::kPeerFailure);
  EXPECT_NE(call.status().message().find("rank 3 is dead (a test)"), std::string::npos)
      << call.status().ToString();
  // Rank 3's own frames are fenced: its call is answered so.
  auto fenced = three.Call(Rank{0}, 5, {}, milliseconds(5000));
  EXPECT_NE(fenced.status().message().find("fenced rank 3"), std::string::npos)
      << fenced.status().ToString();
}

}  // namespace
}  // namespace mooncake::transport

#include "transport/rpc.h"

#include <gtest/gtest.h>

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
  b.Register(7, [](Rank from, std::span<const std::byte> req, Responder r) {
    std::string text(reinterpret_cast<const char*>(req.data()), req.size());
    std::string reply = text + " from " + std::to_string(from.value);
    r.Reply(AsBytes(reply));
  });
  auto res = a.Call(Rank{1}, 7, AsBytes("ping"), milliseconds(1000));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(AsString(*res), "ping from 0");
}

TEST(RpcTest, HandlerErrorsAndUnknownTypesComeBackAsStatus) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  b.Register(1, [](Rank, std::span<const std::byte>, Responder r) { r.Fail(NotFound("key x")); });
  auto res = a.Call(Rank{1}, 1, {}, milliseconds(1000));
  EXPECT_EQ(res.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(res.status().message().find("rank 1"), std::string::npos);
  auto unknown = a.Call(Rank{1}, 99, {}, milliseconds(1000));
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotSupported);
}

TEST(RpcTest, SilentPeerTimesOutNamingIt) {
  std::shared_ptr<LoopbackHub> hub;
  auto ranks = CreateLoopbackCluster(2, &hub);
  Rpc a(*ranks[0]), b(*ranks[1]);
  b.Register(3, [](Rank, std::span<const std::byte>, Responder) { /* never answers */ });
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
  b.Register(2, [](Rank, std::span<const std::byte>, Responder r) { r.Reply({}); });
  EXPECT_TRUE(a.Call(Rank{1}, 2, {}, milliseconds(1000)).ok());
  EXPECT_EQ(b.malformed_frames(), 1u);
}

}  // namespace
}  // namespace mooncake::transport

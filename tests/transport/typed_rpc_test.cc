// The typed spelling of the Rpc (Register<Req, Resp>, Call<Req, Resp>, Notify) over the loopback
// transport, and the refusal of a second handler for one message id.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/message_ids.h"
#include "transport/loopback/loopback_transport.h"
#include "transport/rpc.h"

namespace mooncake::transport {
namespace {

using std::chrono::milliseconds;

constexpr uint16_t kEcho = 0x7e01;  // a test's own id, outside every list of message_ids.h

struct EchoRequest {
  static constexpr const char* kWireName = "EchoRequest";
  std::string text;
  uint32_t times = 1;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.text, m.times);
  }
  Status Validate() const {
    return times <= 8 ? Status::Ok() : InvalidArgument("EchoRequest: times over 8");
  }
};

struct EchoReply {
  static constexpr const char* kWireName = "EchoReply";
  std::string text;
  int32_t from = -1;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.text, m.from);
  }
};

Result<EchoReply> Echo(Rank from, const EchoRequest& q) {
  EchoReply r;
  for (uint32_t i = 0; i < q.times; ++i) r.text += q.text;
  r.from = from.value;
  return r;
}

class TypedRpcTest : public ::testing::Test {
 protected:
  TypedRpcTest() : ranks_(CreateLoopbackCluster(2, &hub_)), a_(*ranks_[0]), b_(*ranks_[1]) {}
  std::shared_ptr<LoopbackHub> hub_;
  std::vector<std::unique_ptr<Transport>> ranks_;
  Rpc a_, b_;
};

TEST_F(TypedRpcTest, ACallRoundTripsItsRequestAndAnswer) {
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(kEcho, Echo)).ok());
  auto reply = a_.Call<EchoRequest, EchoReply>(Rank{1}, kEcho, {"ab", 3}, milliseconds(5000));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->text, "ababab");
  EXPECT_EQ(reply->from, 0);
}

TEST_F(TypedRpcTest, InlineHandlersAndEmptyAnswersRoundTripToo) {
  std::atomic<int> seen{0};
  ASSERT_TRUE((b_.RegisterInline<EchoRequest, EmptyMessage>(kEcho, [&](Rank, const EchoRequest& q) {
                seen += static_cast<int>(q.times);
                return Status::Ok();
              })).ok());
  auto reply = a_.Call<EchoRequest, EmptyMessage>(Rank{1}, kEcho, {"x", 2}, milliseconds(5000));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_TRUE(a_.Notify(Rank{1}, kEcho, EchoRequest{"y", 5}).ok());
  for (int i = 0; i < 1000 && seen.load() < 7; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(seen.load(), 7);
}

TEST_F(TypedRpcTest, AHandlerThatCannotFailReturnsItsAnswerPlain) {
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(kEcho, [](Rank, const EchoRequest& q) {
                return EchoReply{q.text, 7};
              })).ok());
  auto reply = a_.Call<EchoRequest, EchoReply>(Rank{1}, kEcho, {"plain", 1}, milliseconds(5000));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->text, "plain");
  EXPECT_EQ(reply->from, 7);
}

TEST_F(TypedRpcTest, AHandlersErrorIsTheCallersAnswer) {
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(kEcho, [](Rank, const EchoRequest&) {
                return Result<EchoReply>(NotFound("no echo today"));
              })).ok());
  auto reply = a_.Call<EchoRequest, EchoReply>(Rank{1}, kEcho, {"ab", 1}, milliseconds(5000));
  EXPECT_EQ(reply.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(reply.status().message().find("no echo today"), std::string::npos);
}

// A request of the wrong size (one byte more, one byte less) or one that breaks its own rules
// never reaches the handler: the caller gets ProtocolError naming the message.
TEST_F(TypedRpcTest, ARequestOfTheWrongSizeNeverReachesTheHandler) {
  std::atomic<int> handled{0};
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(kEcho, [&](Rank from, const EchoRequest& q) {
                ++handled;
                return Echo(from, q);
              })).ok());
  std::vector<std::byte> good = WireEncode(EchoRequest{"ab", 1});
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  std::vector<std::byte> shorter(good.begin(), good.end() - 1);
  for (const auto& bytes : {longer, shorter}) {
    auto reply = a_.Call(Rank{1}, kEcho, bytes, milliseconds(5000));
    EXPECT_EQ(reply.status().code(), ErrorCode::kProtocolError) << reply.status().ToString();
    EXPECT_NE(reply.status().message().find("EchoRequest"), std::string::npos)
        << reply.status().ToString();
  }
  auto invalid = a_.Call<EchoRequest, EchoReply>(Rank{1}, kEcho, {"ab", 9}, milliseconds(5000));
  EXPECT_EQ(invalid.status().code(), ErrorCode::kInvalidArgument) << invalid.status().ToString();
  EXPECT_EQ(handled.load(), 0);
  EXPECT_TRUE(a_.Call(Rank{1}, kEcho, good, milliseconds(5000)).ok());
  EXPECT_EQ(handled.load(), 1);
}

TEST_F(TypedRpcTest, AnAnswerOfTheWrongSizeIsRefusedNamingTheMessage) {
  std::vector<std::byte> answer = WireEncode(EchoReply{"ok", 1});
  answer.pop_back();  // truncated
  ASSERT_TRUE(b_.Register(kEcho, [&](Rank, std::span<const std::byte>, Responder r) {
                  r.Reply(answer);
                }).ok());
  auto reply = a_.Call<EchoRequest, EchoReply>(Rank{1}, kEcho, {"ab", 1}, milliseconds(5000));
  EXPECT_EQ(reply.status().code(), ErrorCode::kProtocolError) << reply.status().ToString();
  EXPECT_NE(reply.status().message().find("EchoReply"), std::string::npos)
      << reply.status().ToString();
}

// One id, one handler: a second registration (typed or not, inline or not) is refused naming
// the id, and the first handler keeps answering.
TEST_F(TypedRpcTest, ASecondHandlerForOneIdIsRefusedAndTheFirstStays) {
  const uint16_t put_start = static_cast<uint16_t>(store::StoreMsg::kPutStart);
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(put_start, Echo)).ok());
  Status second = b_.Register<EchoRequest, EchoReply>(
      put_start, [](Rank, const EchoRequest&) { return Result<EchoReply>(EchoReply{"second"}); });
  EXPECT_EQ(second.code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(second.message().find("message 0x0401 (store kPutStart)"), std::string::npos)
      << second.ToString();
  Status inline_second = b_.RegisterInline(
      put_start, [](Rank, std::span<const std::byte>, Responder r) { r.Fail(Internal("2nd")); });
  EXPECT_EQ(inline_second.code(), ErrorCode::kAlreadyExists) << inline_second.ToString();
  auto reply =
      a_.Call<EchoRequest, EchoReply>(Rank{1}, put_start, {"first", 1}, milliseconds(5000));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->text, "first");
  // Replacing a handler is said explicitly: unregister, then register the successor.
  EXPECT_TRUE(b_.Unregister(put_start));
  EXPECT_FALSE(b_.Unregister(put_start));
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(put_start, [](Rank, const EchoRequest&) {
                return Result<EchoReply>(EchoReply{"successor"});
              })).ok());
  reply = a_.Call<EchoRequest, EchoReply>(Rank{1}, put_start, {"first", 1}, milliseconds(5000));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->text, "successor");
  // An id of no list is named by its number.
  ASSERT_TRUE((b_.Register<EchoRequest, EchoReply>(kEcho, Echo)).ok());
  Status again = b_.Register<EchoRequest, EchoReply>(kEcho, Echo);
  EXPECT_NE(again.message().find("message 0x7e01 "), std::string::npos) << again.ToString();
}

}  // namespace
}  // namespace mooncake::transport

#include <gtest/gtest.h>

#include <cstring>

#include "transport/rpc.h"

namespace mooncake::transport {
namespace {

std::vector<std::byte> Bytes(const char* s) {
  return std::vector<std::byte>(reinterpret_cast<const std::byte*>(s),
                                reinterpret_cast<const std::byte*>(s) + std::strlen(s));
}

TEST(RpcFrameTest, RoundTrip) {
  auto payload = Bytes("hello");
  auto frame = EncodeFrame(FrameKind::kRequest, 42, ErrorCode::kOk, 7, payload);
  auto decoded = DecodeFrame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->kind, FrameKind::kRequest);
  EXPECT_EQ(decoded->type, 42);
  EXPECT_EQ(decoded->call_id, 7u);
  EXPECT_EQ(std::vector<std::byte>(decoded->payload.begin(), decoded->payload.end()), payload);
}

TEST(RpcFrameTest, EveryTruncationIsRejected) {
  auto frame = EncodeFrame(FrameKind::kResponse, 1, ErrorCode::kNotFound, 9, Bytes("payload"));
  for (size_t n = 0; n < frame.size(); ++n) {
    std::span<const std::byte> cut(frame.data(), n);
    EXPECT_FALSE(DecodeFrame(cut).ok()) << "accepted a frame cut to " << n << " bytes";
  }
}

TEST(RpcFrameTest, OversizedLengthAndTrailingBytesAndBadKindAreRejected) {
  auto frame = EncodeFrame(FrameKind::kOneWay, 1, ErrorCode::kOk, 0, Bytes("abc"));
  auto trailing = frame;
  trailing.push_back(std::byte{0});
  EXPECT_FALSE(DecodeFrame(trailing).ok());

  auto oversized = frame;
  const uint32_t huge = kMaxRpcPayload + 1;
  std::memcpy(oversized.data() + 31, &huge, 4);  // the payload length field
  EXPECT_EQ(DecodeFrame(oversized).status().code(), ErrorCode::kProtocolError);

  auto bad_kind = frame;
  bad_kind[2] = std::byte{9};
  EXPECT_FALSE(DecodeFrame(bad_kind).ok());
}

}  // namespace
}  // namespace mooncake::transport

#include <gtest/gtest.h>

#include "transport/transport.h"

namespace mooncake::transport {
namespace {

TEST(RemoteDescriptorTest, RoundTripAndTruncationRejected) {
  RemoteDescriptor d;
  d.addr = 0x7f0000001000;
  d.length = 1 << 20;
  d.packed_key = {std::byte{1}, std::byte{2}, std::byte{3}};
  auto bytes = d.Encode();
  auto back = RemoteDescriptor::Decode(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->addr, d.addr);
  EXPECT_EQ(back->length, d.length);
  EXPECT_EQ(back->packed_key, d.packed_key);
  bytes.pop_back();
  EXPECT_EQ(RemoteDescriptor::Decode(bytes).status().code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::transport

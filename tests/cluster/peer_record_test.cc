#include <gtest/gtest.h>

#include "cluster/peer_exchange.h"

namespace mooncake::cluster {
namespace {

TEST(PeerRecordTest, RoundTripAndEveryTruncationRejected) {
  PeerInfo info;
  info.role = Role::kStore;
  info.host = "node17";
  transport::RemoteDescriptor d;
  d.addr = 4096;
  d.length = 1 << 20;
  d.packed_key = {std::byte{9}, std::byte{8}};
  info.regions.push_back(d);
  std::vector<std::byte> address = {std::byte{1}, std::byte{2}, std::byte{3}};
  auto bytes = EncodePeerRecord(info, address);
  std::vector<std::byte> got_address;
  auto back = DecodePeerRecord(bytes, &got_address);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->host, "node17");
  EXPECT_EQ(back->role, Role::kStore);
  ASSERT_EQ(back->regions.size(), 1u);
  EXPECT_EQ(back->regions[0].packed_key, d.packed_key);
  EXPECT_EQ(got_address, address);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodePeerRecord(std::span(bytes.data(), n), &got_address).ok()) << n;
  }
}

}  // namespace
}  // namespace mooncake::cluster

#include <gtest/gtest.h>

#include "transport/ucx/ucx_config.h"

namespace mooncake::transport {
namespace {

TEST(TlsTest, FamiliesAreReadTokenByTokenNotBySubstring) {
  TlsFamilies shm = ClassifyTls(ResolveTls("shm"));
  EXPECT_TRUE(shm.pinned);
  EXPECT_TRUE(shm.shm);
  EXPECT_FALSE(shm.tcp);
  TlsFamilies tcp = ClassifyTls(ResolveTls("tcp"));
  EXPECT_TRUE(tcp.tcp);
  EXPECT_FALSE(tcp.shm);
  EXPECT_FALSE(tcp.rdma);
  // "cuda_copy" contains "ud" and "rc" nowhere near an rdma transport.
  TlsFamilies raw = ClassifyTls("tcp,cuda_copy,self");
  EXPECT_TRUE(raw.tcp);
  EXPECT_FALSE(raw.rdma);
  TlsFamilies rdma = ClassifyTls(ResolveTls("rdma"));
  EXPECT_TRUE(rdma.rdma);
  EXPECT_TRUE(rdma.shm);
  EXPECT_FALSE(ClassifyTls(ResolveTls("auto")).pinned);
}

}  // namespace
}  // namespace mooncake::transport

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

// The tcp receive segment is set wherever UCX may open tcp (the ends of a tcp connection must
// agree on it), and nowhere else (UCX warns about a setting no interface took).
TEST(TlsTest, TcpMayOpenUnderUcxDefaultsListsAndExclusions) {
  EXPECT_TRUE(TcpMayOpen("all"));
  EXPECT_TRUE(TcpMayOpen(""));
  EXPECT_TRUE(TcpMayOpen("tcp,self"));
  EXPECT_TRUE(TcpMayOpen("posix,sysv,cma,tcp,self"));
  EXPECT_TRUE(TcpMayOpen("^sm"));
  EXPECT_FALSE(TcpMayOpen("posix,sysv,cma,self"));
  EXPECT_FALSE(TcpMayOpen("^tcp"));
  EXPECT_FALSE(TcpMayOpen("^ud,tcp"));
  EXPECT_FALSE(TcpMayOpen("rc,ud,self,posix,sysv,cma"));
}

}  // namespace
}  // namespace mooncake::transport

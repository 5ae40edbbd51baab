// `mooncake store inspect`: a missing file is named as missing (not an HDF5 error), and
// `inspect --help` prints the usage instead of being taken for a file name. `mooncake store
// stop` on a stale connection file says that the job behind it has stopped. `store join` and
// `store drain` refuse bad arguments with exit 2.
#include "app/store_command.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.h"

namespace mooncake::app {
namespace {

int RunStore(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return RunStoreCommand(static_cast<int>(argv.size()), argv.data());
}

TEST(StoreCommand, MissingFileIsNamedAndExitsTwo) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStore({"store", "inspect", "/nonexistent/bucket-00000000.h5"}), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("/nonexistent/bucket-00000000.h5: no such file"), std::string::npos) << err;
}

TEST(StoreCommand, InspectHelpPrintsTheUsage) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunStore({"store", "inspect", "--help"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("usage: mooncake store inspect FILE"),
            std::string::npos);
}

// `store join` and `store drain` (issue 33, item 4): usage errors name what is wrong, exit 2.
TEST(StoreCommand, JoinAndDrainUsageErrorsExitTwoNamingTheProblem) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStore({"store", "join"}), 2);
  EXPECT_EQ(RunStore({"store", "join", "/nonexistent/connect.json"}), 2);
  EXPECT_EQ(RunStore({"store", "join", "x.json", "--store.dram", "12"}), 2);
  EXPECT_EQ(RunStore({"store", "drain", "one", "/nonexistent/connect.json"}), 2);
  EXPECT_EQ(RunStore({"store", "drain", "1", "/nonexistent/connect.json"}), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("missing CONNECT_FILE"), std::string::npos) << err;
  EXPECT_NE(err.find("store.dram = '12'"), std::string::npos) << err;
  EXPECT_NE(err.find("RANK 'one' is not a rank number"), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent/connect.json"), std::string::npos) << err;
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunStore({"store", "join", "--help"}), 0);
  EXPECT_EQ(RunStore({"store", "drain", "--help"}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("--store.dram"), std::string::npos) << out;
  EXPECT_NE(out.find("usage: mooncake store drain RANK CONNECT_FILE"), std::string::npos);
}

// A file that is not HDF5: the error goes to stderr (stdout stays for the listing), exit 2.
TEST(StoreCommand, InspectOfANonBucketFileErrsOnStderr) {
  const test_support::ScratchDir dir;
  const std::string path = dir / "not-hdf5.txt";
  std::ofstream(path) << "not an HDF5 file\n";
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStore({"store", "inspect", path}), 2);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("error: "), std::string::npos) << err;
}

// A port on 127.0.0.1 that nothing listens on (bound, then released).
int UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A stale connection file (its job has stopped, nothing listens at its master's address): the
// error says so and names the file, as the Python client does; exit 1.
TEST(StoreCommand, StopOnAStaleConnectionFileSaysTheJobHasStopped) {
  const int port = UnusedPort();
  ASSERT_NE(port, 0);
  const test_support::ScratchDir dir;
  const std::string path = dir / "connect.json";
  std::ofstream(path) << R"({"format": "mooncake-connect", "version": 1, "token": )"
                      << R"("0123456789abcdef0123456789abcdef", "world_size": 2, )"
                      << R"("master": {"rank": 0, "addresses": ["127.0.0.1:)" << port
                      << R"("]}, "store": {"ranks": [1]}})";
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStore({"store", "stop", path}), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the store job behind " + path + " has stopped"), std::string::npos) << err;
}

}  // namespace
}  // namespace mooncake::app

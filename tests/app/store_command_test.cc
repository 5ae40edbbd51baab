// `mooncake store inspect`: a missing file is named as missing (not an HDF5 error), and
// `inspect --help` prints the usage instead of being taken for a file name.
#include "app/store_command.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mooncake::app

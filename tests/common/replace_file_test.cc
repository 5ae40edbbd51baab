// ReplaceFile: a reader sees the old file or a new one whole, the mode holds from the first byte,
// and a failure names the file and leaves nothing beside it.
#include "common/replace_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace mooncake {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ReplaceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/replace-file-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReplaceFileTest, TheNewTextReplacesTheOldWholeAndNothingIsLeftBeside) {
  const fs::path path = dir_ / "endpoint.json";
  ASSERT_TRUE(ReplaceFile(path, "old\n").ok());
  const std::string big(1 << 20, 'x');  // more than one write may take
  ASSERT_TRUE(ReplaceFile(path, big).ok());
  EXPECT_EQ(ReadAll(path), big);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ReplaceFileTest, TheModeHoldsFromTheStart) {
  const fs::path path = dir_ / "connect.json";
  ASSERT_TRUE(ReplaceFile(path, "token\n", 0600).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadAll(path), "token\n");
  // Without a mode, the umask decides, as for any file the process creates.
  const mode_t umask_now = ::umask(022);
  ::umask(umask_now);
  const fs::path plain = dir_ / "summary.json";
  ASSERT_TRUE(ReplaceFile(plain, "{}\n").ok());
  ASSERT_EQ(::stat(plain.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u & ~umask_now);
}

// Ranks of a job on one node may write the same file at once (bootstrap.json): a reader sees one
// writer's whole text at every moment, and every writer succeeds.
TEST_F(ReplaceFileTest, WritersOfOneFileAtOnceLeaveAWholeFileAtEveryMoment) {
  const fs::path path = dir_ / "bootstrap.json";
  ASSERT_TRUE(ReplaceFile(path, std::string(4096, 'a')).ok());
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (char c : {'b', 'c', 'd'}) {
    writers.emplace_back([&, c] {
      for (int i = 0; i < 200; ++i) failures += !ReplaceFile(path, std::string(4096, c)).ok();
    });
  }
  std::thread reader([&] {
    while (!done) {
      const std::string text = ReadAll(path);
      if (text.size() != 4096 || text != std::string(4096, text[0])) {
        ADD_FAILURE() << "a reader saw " << text.size() << " bytes, not one writer's 4096";
        return;
      }
    }
  });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ReplaceFileTest, AFailureNamesTheFileAndLeavesNothing) {
  const fs::path path = dir_ / "no-such-folder" / "metrics.json";
  const Status s = ReplaceFile(path, "x");
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("no-such-folder/metrics.json"), std::string::npos) << s.message();
  // A target that is a folder: the partial file is written, the rename fails and is cleaned up.
  fs::create_directory(dir_ / "a-folder");
  fs::create_directory(dir_ / "a-folder" / "inside");
  const Status over = ReplaceFile(dir_ / "a-folder", "x");
  EXPECT_EQ(over.code(), ErrorCode::kIoError);
  EXPECT_NE(over.message().find("a-folder"), std::string::npos) << over.message();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace mooncake

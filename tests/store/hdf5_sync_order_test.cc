// The SSD tier's syncs with fsync on, traced through its sync hook (Hdf5TierOptions::on_sync)
// and commit-stage hook: bytes, then index slots reach the OS, one fdatasync makes both durable,
// and a new bucket file's first group also fsyncs the folder, all before the block is
// acknowledged.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "../support/scratch_dir.h"
#include "store/hdf5/tier.h"

namespace mooncake::store::hdf5 {
namespace {

namespace fs = std::filesystem;

class Hdf5SyncOrderTest : public ::testing::Test {
 protected:
  test_support::ScratchDir scratch_{"mooncake-hdf5-sync-test"};
  std::string dir_ = (fs::path(scratch_.path()) / "tier").string();  // Open creates it

  // Two 40 KiB blocks fill a bucket, so every third block opens a new file.
  Hdf5TierOptions Options() {
    Hdf5TierOptions o;
    o.dir = dir_;
    o.capacity = 1ull << 20;
    o.bucket_bytes = 96 << 10;
    o.bucket_entries = 8;
    o.fsync = true;
    o.cluster_id = "sync-test";
    o.on_commit_stage = [this](CommitStage s) {
      if (s == CommitStage::kBytesFlushed) Note("bytes flushed");
      if (s == CommitStage::kIndexFlushed) Note("index flushed");
      if (s == CommitStage::kSynced) Note("synced");
    };
    o.on_sync = [this](SyncKind kind, const std::string& path) {
      Note((kind == SyncKind::kFileData ? "fdatasync " : "fsync folder ") +
           fs::path(path).filename().string());
      return Status::Ok();
    };
    return o;
  }
  void Note(std::string event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(events_, {});
  }
  // Spills one block and waits for its acknowledgement (noted as "ack <key>").
  void SpillOne(Hdf5Tier& t, const std::string& key) {
    std::vector<std::byte> bytes(40 << 10, std::byte{7});
    std::promise<Status> acked;
    ASSERT_TRUE(t.Spill(key, 1, bytes, 0, [&](Result<SsdBlock> r) {
                   Note("ack " + key);
                   acked.set_value(r.status());
                 }).ok());
    Status s = acked.get_future().get();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(Hdf5SyncOrderTest, ANewBucketFilesFolderIsSyncedAfterItsBytesAndIndexBeforeTheAck) {
  auto tier = Hdf5Tier::Open(Options(), nullptr);
  ASSERT_TRUE(tier.ok()) << tier.status().ToString();
  // Open created the tier's folder: its name in the scratch folder is made durable.
  EXPECT_EQ(Take(), std::vector<std::string>{"fsync folder " +
                                             fs::path(scratch_.path()).filename().string()});

  SpillOne(**tier, "a");  // the first block creates bucket-00000000.h5
  EXPECT_EQ(Take(), (std::vector<std::string>{"bytes flushed", "index flushed",
                                              "fdatasync bucket-00000000.h5", "fsync folder tier",
                                              "synced", "ack a"}));
  SpillOne(**tier, "b");  // same file: its name is durable already
  EXPECT_EQ(Take(), (std::vector<std::string>{"bytes flushed", "index flushed",
                                              "fdatasync bucket-00000000.h5", "synced", "ack b"}));
  SpillOne(**tier, "c");  // no room left: a new file
  EXPECT_EQ(Take(), (std::vector<std::string>{"bytes flushed", "index flushed",
                                              "fdatasync bucket-00000001.h5", "fsync folder tier",
                                              "synced", "ack c"}));
}

// A failed folder sync fails the group: its blocks are not acknowledged as written.
TEST_F(Hdf5SyncOrderTest, AFailedFolderSyncFailsTheBlocksOfThatCommit) {
  Hdf5TierOptions o = Options();
  o.on_sync = [](SyncKind kind, const std::string& path) {
    return kind == SyncKind::kDirectory && fs::path(path).filename() == "tier"
               ? IoError("injected: fsync of " + path)
               : Status::Ok();
  };
  auto tier = Hdf5Tier::Open(o, nullptr);
  ASSERT_TRUE(tier.ok()) << tier.status().ToString();
  std::vector<std::byte> bytes(40 << 10, std::byte{7});
  std::promise<Status> acked;
  ASSERT_TRUE(
      (*tier)
          ->Spill("a", 1, bytes, 0, [&](Result<SsdBlock> r) { acked.set_value(r.status()); })
          .ok());
  Status s = acked.get_future().get();
  EXPECT_EQ(s.code(), ErrorCode::kIoError) << s.ToString();
  EXPECT_FALSE((*tier)->LookupLatest("a").ok());
}

}  // namespace
}  // namespace mooncake::store::hdf5

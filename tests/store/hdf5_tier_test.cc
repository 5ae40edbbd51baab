#include "store/hdf5/tier.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <set>
#include <thread>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <random>
#include <sstream>

#include "../support/scratch_dir.h"
#include "common/checksum.h"
#include "store/hdf5/inspect.h"

namespace mooncake::store::hdf5 {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

class Hdf5TierTest : public ::testing::Test {
 protected:
  test_support::ScratchDir scratch_{"mooncake-hdf5-test"};  // removed after each test
  std::string dir_ = scratch_.path();

  Hdf5TierOptions Options() {
    Hdf5TierOptions o;
    o.dir = dir_;
    o.capacity = 64ull << 20;
    o.bucket_bytes = 8ull << 20;
    o.bucket_entries = 64;
    o.queue_bytes = 4ull << 20;
    o.cluster_id = "test-cluster";
    o.model_preset = "llama3-8b";
    o.kv_layout = "layers=32,kv_heads=8,head_dim=128,dtype=bf16";
    o.store_rank = 3;
    return o;
  }
  std::unique_ptr<Hdf5Tier> OpenTier(Hdf5TierOptions o, RecoveryReport* report = nullptr) {
    auto t = Hdf5Tier::Open(std::move(o), report);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  // Spills `n` blocks of `size` bytes named b0..b{n-1}; returns their contents.
  std::vector<std::vector<std::byte>> SpillBlocks(Hdf5Tier& t, int n, size_t size) {
    std::vector<std::vector<std::byte>> blocks;
    for (int i = 0; i < n; ++i) {
      blocks.push_back(RandomBytes(size, 100 + i));
      auto& b = blocks.back();
      EXPECT_TRUE(
          t.Spill("b" + std::to_string(i), 1, b, Checksum64(b.data(), b.size()), nullptr).ok());
    }
    t.Drain();
    return blocks;
  }
  std::string OnlyFile() {
    std::vector<std::string> files;
    for (auto& de : fs::directory_iterator(dir_)) files.push_back(de.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : files[0];
  }
  // Physical offset of a block's bytes inside the file, found by content (tests stay HDF5-free).
  static size_t FindInFile(const std::string& path, const std::vector<std::byte>& block) {
    std::ifstream in(path, std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), {});
    std::string needle(reinterpret_cast<const char*>(block.data()), 256);
    return file.find(needle);
  }
};

TEST_F(Hdf5TierTest, SpilledBlocksReadBackWithVerifiedBytes) {
  auto t = OpenTier(Options());
  std::vector<std::string> done_keys;
  std::mutex mu;
  auto blocks = SpillBlocks(*t, 5, 100 * 1024);
  auto b = RandomBytes(4096, 7);
  ASSERT_TRUE(t->Spill("cb", 1, b, Checksum64(b.data(), b.size()), [&](Result<SsdBlock> r) {
                 std::lock_guard<std::mutex> lock(mu);
                 if (r.ok()) done_keys.push_back(r->key);
               }).ok());
  t->Drain();
  EXPECT_EQ(done_keys, std::vector<std::string>{"cb"});
  for (int i = 0; i < 5; ++i) {
    std::vector<std::byte> out(blocks[i].size());
    auto n = t->Read("b" + std::to_string(i), 1, out);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, blocks[i].size());
    EXPECT_EQ(out, blocks[i]);
  }
  std::vector<std::byte> small(10);
  EXPECT_EQ(t->Read("b0", 1, small).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t->Read("nope", 1, small).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(t->Stats().blocks, 6u);
}

TEST_F(Hdf5TierTest, BorrowedSpillWritesTheCallersBytesBeforeDone) {
  auto t = OpenTier(Options());
  auto b = RandomBytes(200 * 1024, 11);
  std::promise<Result<SsdBlock>> done;
  ASSERT_TRUE(
      t->SpillBorrowed("borrowed", 1, b, Checksum64(b.data(), b.size()), [&](Result<SsdBlock> r) {
         done.set_value(std::move(r));
       }).ok());
  auto r = done.get_future().get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::fill(b.begin(), b.end(), std::byte{0});  // the caller may reuse its memory now
  std::vector<std::byte> out(b.size());
  ASSERT_TRUE(t->Read("borrowed", 1, out).ok());
  EXPECT_EQ(out, RandomBytes(200 * 1024, 11));
}

TEST_F(Hdf5TierTest, FileDescribesItselfAndInspectVerifiesEveryBlock) {
  {
    auto t = OpenTier(Options());
    SpillBlocks(*t, 3, 64 * 1024);
  }
  std::ostringstream out;
  EXPECT_EQ(InspectFile(OnlyFile(), out, out), 0) << out.str();
  EXPECT_NE(out.str().find("cluster_id 'test-cluster'"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("model_preset 'llama3-8b'"), std::string::npos);
  EXPECT_NE(out.str().find("3 blocks, 3 intact, 0 corrupt"), std::string::npos) << out.str();
}

TEST_F(Hdf5TierTest, RestartRebuildsTheIndexFromTheFiles) {
  std::vector<std::vector<std::byte>> blocks;
  {
    auto t = OpenTier(Options());
    blocks = SpillBlocks(*t, 20, 512 * 1024);  // 10 MiB: spans two bucket files
  }
  RecoveryReport report;
  auto t = OpenTier(Options(), &report);
  EXPECT_EQ(report.files, 2u);
  EXPECT_EQ(report.recovered, 20u);
  EXPECT_EQ(report.dropped, 0u);
  ASSERT_EQ(report.blocks.size(), 20u);
  EXPECT_EQ(report.blocks[0].checksum, Checksum64(blocks[0].data(), blocks[0].size()));
  for (int i = 0; i < 20; ++i) {
    std::vector<std::byte> out(blocks[i].size());
    ASSERT_TRUE(t->Read("b" + std::to_string(i), 1, out).ok()) << i;
    EXPECT_EQ(out, blocks[i]);
  }
  // New blocks go to a new file; the recovered ones stay readable.
  auto extra = RandomBytes(1024, 5);
  ASSERT_TRUE(t->Spill("extra", 1, extra, Checksum64(extra.data(), extra.size()), nullptr).ok());
  t->Drain();
  EXPECT_EQ(t->Stats().buckets, 3u);
  std::vector<std::byte> out(extra.size());
  ASSERT_TRUE(t->Read("extra", 1, out).ok());
  EXPECT_EQ(out, extra);
}

TEST_F(Hdf5TierTest, FileTruncatedInTheMiddleOfABlockLosesOnlyThatBlock) {
  std::vector<std::vector<std::byte>> blocks;
  {
    auto t = OpenTier(Options());
    blocks = SpillBlocks(*t, 6, 200 * 1024);
  }
  std::string path = OnlyFile();
  size_t at = FindInFile(path, blocks[5]);
  ASSERT_NE(at, std::string::npos);
  fs::resize_file(path, at + blocks[5].size() / 2);  // a torn write of the last block
  std::ostringstream out;
  EXPECT_EQ(InspectFile(path, out, out), 1) << out.str();
  RecoveryReport report;
  auto t = OpenTier(Options(), &report);
  EXPECT_EQ(report.recovered, 5u);
  EXPECT_EQ(report.dropped, 1u);
  EXPECT_EQ(report.dropped_torn, 1u);
  ASSERT_EQ(report.file_notes.size(), 1u);  // named, with the reason
  EXPECT_EQ(report.file_notes[0].rfind(path + ": dropped 1 torn", 0), 0u) << report.file_notes[0];
  std::vector<std::byte> buf(blocks[0].size());
  EXPECT_EQ(t->Read("b5", 1, buf).status().code(), ErrorCode::kNotFound);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(t->Read("b" + std::to_string(i), 1, buf).ok()) << i;
    EXPECT_EQ(buf, blocks[i]);
  }
}

TEST_F(Hdf5TierTest, FlippedByteIsDetectedByReadInspectAndRecovery) {
  std::vector<std::vector<std::byte>> blocks;
  auto t = OpenTier(Options());
  blocks = SpillBlocks(*t, 4, 300 * 1024);
  std::string path = OnlyFile();
  size_t at = FindInFile(path, blocks[2]);
  ASSERT_NE(at, std::string::npos);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at + 1000);
    char c = static_cast<char>(blocks[2][1000]) ^ 0x10;
    f.write(&c, 1);
  }
  std::vector<std::byte> buf(blocks[2].size());
  EXPECT_EQ(t->Read("b2", 1, buf).status().code(), ErrorCode::kCorrupt);
  EXPECT_TRUE(t->Read("b1", 1, buf).ok());
  t.reset();
  std::ostringstream out;
  EXPECT_EQ(InspectFile(path, out, out), 1);
  EXPECT_NE(out.str().find("CORRUPT  b2"), std::string::npos) << out.str();
  RecoveryReport report;
  t = OpenTier(Options(), &report);
  EXPECT_EQ(report.recovered, 3u);
  EXPECT_EQ(report.dropped, 1u);
}

TEST_F(Hdf5TierTest, LruDropsTheLeastRecentlyUsedBucketAtCapacity) {
  auto opts = Options();
  opts.capacity = 2ull << 20;
  opts.bucket_bytes = 1ull << 20;
  std::vector<std::string> dropped;
  opts.on_drop = [&](const std::string& k) { dropped.push_back(k); };
  auto t = OpenTier(opts);
  // 256 KiB less 64 B each: with its key a record takes 256 KiB, four to a bucket.
  SpillBlocks(*t, 8, 256 * 1024 - 64);  // buckets: {b0..b3} {b4..b7}
  std::vector<std::byte> buf(256 * 1024);
  ASSERT_TRUE(t->Read("b1", 1, buf).ok());  // the first bucket becomes the most recently used
  auto b = RandomBytes(256 * 1024, 99);
  ASSERT_TRUE(t->Spill("new", 1, b, Checksum64(b.data(), b.size()), nullptr).ok());
  t->Drain();
  EXPECT_EQ(dropped, (std::vector<std::string>{"b4", "b5", "b6", "b7"}));
  EXPECT_EQ(t->Read("b5", 1, buf).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(t->Read("b1", 1, buf).ok());
  EXPECT_TRUE(t->Read("new", 1, buf).ok());
  EXPECT_EQ(t->Stats().buckets, 2u);
}

// A store (store.when_full = keep): a full tier deletes nothing and refuses the spill, naming
// itself, so the caller keeps the block.
TEST_F(Hdf5TierTest, WithoutLruAFullTierRefusesSpillsAndKeepsEveryBlock) {
  auto opts = Options();
  opts.capacity = 2ull << 20;
  opts.bucket_bytes = 1ull << 20;
  opts.evict_lru = false;
  std::vector<std::string> dropped;
  opts.on_drop = [&](const std::string& k) { dropped.push_back(k); };
  auto t = OpenTier(opts);
  SpillBlocks(*t, 8, 256 * 1024 - 64);  // both buckets full
  auto b = RandomBytes(256 * 1024, 99);
  std::optional<Status> result;
  ASSERT_TRUE(t->Spill("new", 1, b, Checksum64(b.data(), b.size()), [&](Result<SsdBlock> r) {
                 result = r.status();
               }).ok());
  t->Drain();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), ErrorCode::kNoSpace) << result->ToString();
  EXPECT_NE(result->message().find("SSD tier in " + dir_ + " is full"), std::string::npos)
      << result->ToString();
  EXPECT_TRUE(dropped.empty());
  std::vector<std::byte> buf(256 * 1024);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(t->Read("b" + std::to_string(i), 1, buf).ok()) << i;
  EXPECT_EQ(t->Read("new", 1, buf).status().code(), ErrorCode::kNotFound);
}

TEST_F(Hdf5TierTest, FullQueueAppliesBackPressure) {
  auto opts = Options();
  opts.queue_bytes = 2 * 4096;
  auto t = OpenTier(opts);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  auto b = RandomBytes(4096, 1);
  uint64_t sum = Checksum64(b.data(), b.size());
  // The first job's callback holds the writer, so the queue cannot drain.
  ASSERT_TRUE(t->TrySpill("k0", 1, b, sum, [gate](Result<SsdBlock>) { gate.wait(); }).ok());
  ASSERT_TRUE(t->TrySpill("k1", 1, b, sum, nullptr).ok());
  Status s = t->TrySpill("k2", 1, b, sum, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kBusy);
  EXPECT_LE(t->Stats().queued_bytes, opts.queue_bytes);
  release.set_value();
  t->Drain();
  EXPECT_TRUE(t->TrySpill("k2", 1, b, sum, nullptr).ok());
  t->Drain();
  EXPECT_EQ(t->Stats().blocks, 3u);
}

// Group commit under a crash. A child process spills kCrashBlocks blocks in groups of
// kCrashGroup (the first group waits until all are queued, so the later ones are full) and
// SIGKILLs itself at `stage` of the third group; every block it acknowledged goes to the parent
// through a pipe. The parent then recovers the folder.
constexpr int kCrashBlocks = 40;
constexpr int kCrashGroup = 10;
constexpr size_t kCrashBlockBytes = 64 * 1024;

std::set<int> SpillAndDieAt(Hdf5TierOptions opts, CommitStage stage) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {  // the child: no gtest assertions, only _exit / SIGKILL
    close(fds[0]);
    std::atomic<bool> all_queued{false};
    int group = 0;
    opts.commit_bytes = kCrashGroup * kCrashBlockBytes;
    opts.queue_bytes = 2 * kCrashBlocks * kCrashBlockBytes;
    opts.on_commit_stage = [&](CommitStage s) {
      if (s == CommitStage::kBytesWritten) ++group;
      while (group == 1 && !all_queued.load()) usleep(1000);
      if (group == 3 && s == stage) std::raise(SIGKILL);
    };
    auto t = Hdf5Tier::Open(opts, nullptr);
    if (!t.ok()) _exit(3);
    for (int i = 0; i < kCrashBlocks; ++i) {
      auto b = RandomBytes(kCrashBlockBytes, 100 + i);
      Status st = (*t)->Spill("b" + std::to_string(i), 1, b, Checksum64(b.data(), b.size()),
                              [fd = fds[1], i](Result<SsdBlock> r) {
                                if (r.ok()) (void)!write(fd, &i, sizeof i);
                              });
      if (!st.ok()) _exit(4);
    }
    all_queued = true;
    (*t)->Drain();
    _exit(5);  // not reached: the third group kills the process
  }
  close(fds[1]);
  std::set<int> acked;
  for (int i; read(fds[0], &i, sizeof i) == static_cast<ssize_t>(sizeof i);) acked.insert(i);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  return acked;
}

// Whatever stage the process dies at, recovery finds every acknowledged block with its bytes,
// drops nothing (a killed process never leaves a slot naming unflushed bytes), and whatever
// else it finds (the dying group, once its slots reached the OS) is whole and verified.
TEST_F(Hdf5TierTest, KillDuringAGroupCommitLosesNoAcknowledgedBlockAndServesNoTornOne) {
  for (CommitStage stage :
       {CommitStage::kBytesWritten, CommitStage::kBytesFlushed, CommitStage::kIndexWritten,
        CommitStage::kIndexFlushed, CommitStage::kSynced}) {
    SCOPED_TRACE("killed at stage " + std::to_string(static_cast<int>(stage)));
    test_support::ScratchDir scratch("mooncake-hdf5-crash");
    Hdf5TierOptions opts = Options();
    opts.dir = scratch.path();
    std::set<int> acked = SpillAndDieAt(opts, stage);
    // Group 1 (1..kCrashGroup blocks, however many were queued when the writer woke) and 2.
    EXPECT_GT(acked.size(), static_cast<size_t>(kCrashGroup));
    EXPECT_LE(acked.size(), static_cast<size_t>(2 * kCrashGroup));
    RecoveryReport report;
    auto t = OpenTier(opts, &report);
    ASSERT_TRUE(t);
    EXPECT_EQ(report.dropped, 0u);
    std::set<int> recovered;
    for (const auto& b : report.blocks) recovered.insert(std::stoi(b.key.substr(1)));
    for (int i : acked) EXPECT_TRUE(recovered.count(i)) << "acknowledged b" << i << " lost";
    const size_t dying = stage >= CommitStage::kIndexFlushed ? kCrashGroup : 0;
    if (stage != CommitStage::kIndexWritten) {  // there: in HDF5's buffer or the OS, either way
      EXPECT_EQ(recovered.size(), acked.size() + dying);
    }
    for (int i : recovered) {
      std::vector<std::byte> out(kCrashBlockBytes);
      ASSERT_TRUE(t->Read("b" + std::to_string(i), 1, out).ok()) << i;
      EXPECT_EQ(out, RandomBytes(kCrashBlockBytes, 100 + i)) << i;
    }
  }
}

// A power loss may write the index back before the bytes it names (one fdatasync covers both).
// Zeroing the dying group's bytes after its slots reached the OS stands for that: recovery
// drops exactly those blocks and keeps every acknowledged one.
TEST_F(Hdf5TierTest, IndexOnDiskWithoutItsBytesIsDroppedAtRecovery) {
  Hdf5TierOptions opts = Options();
  std::set<int> acked = SpillAndDieAt(opts, CommitStage::kIndexFlushed);
  ASSERT_GT(acked.size(), static_cast<size_t>(kCrashGroup));
  const std::string path = OnlyFile();
  int zeroed = 0;
  for (int i = 0; i < kCrashBlocks; ++i) {
    if (acked.count(i)) continue;
    size_t at = FindInFile(path, RandomBytes(kCrashBlockBytes, 100 + i));
    if (at == std::string::npos) continue;  // never written
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    std::string zeros(kCrashBlockBytes, '\0');
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    ++zeroed;
  }
  EXPECT_EQ(zeroed, kCrashGroup);
  RecoveryReport report;
  auto t = OpenTier(opts, &report);
  ASSERT_TRUE(t);
  EXPECT_EQ(report.dropped, static_cast<uint64_t>(kCrashGroup));
  EXPECT_EQ(report.recovered, acked.size());
  for (int i : acked) {
    std::vector<std::byte> out(kCrashBlockBytes);
    ASSERT_TRUE(t->Read("b" + std::to_string(i), 1, out).ok()) << i;
    EXPECT_EQ(out, RandomBytes(kCrashBlockBytes, 100 + i));
  }
}

// Blocks queued together share one commit (one flush pair; one fdatasync with fsync on).
TEST_F(Hdf5TierTest, QueuedBlocksShareOneGroupCommit) {
  Hdf5TierOptions opts = Options();
  opts.fsync = true;
  // The first commit waits until all 21 blocks are queued: the rest then form one group.
  std::atomic<bool> all_queued{false};
  opts.on_commit_stage = [&](CommitStage) {
    while (!all_queued.load()) std::this_thread::yield();
  };
  auto t = OpenTier(opts);
  auto b = RandomBytes(4096, 3);
  const uint64_t sum = Checksum64(b.data(), b.size());
  for (int i = 0; i <= 20; ++i)
    ASSERT_TRUE(t->Spill("k" + std::to_string(i), 1, b, sum, nullptr).ok());
  all_queued = true;
  t->Drain();
  EXPECT_EQ(t->Stats().spilled, 21u);
  EXPECT_LE(t->Stats().commits, 2u);
}

TEST_F(Hdf5TierTest, InspectRejectsAFileThatIsNotABucket) {
  std::string path = dir_ + "/bucket-00000000.h5";
  std::ofstream(path) << "not hdf5";
  std::ostringstream out;
  EXPECT_EQ(InspectFile(path, out, out), 2);
  RecoveryReport report;
  auto t = OpenTier(Options(), &report);
  EXPECT_EQ(report.unreadable_files, 1u);
  EXPECT_EQ(report.recovered, 0u);
  ASSERT_EQ(report.file_notes.size(), 1u);
  EXPECT_NE(report.file_notes[0].find(path + ": dropped the whole file (damaged HDF5 metadata"),
            std::string::npos)
      << report.file_notes[0];
}

// Versions and tombstones (issue 27): a higher version replaces the block of a key, an older one
// is refused, a tombstone hides its version at once and keeps it gone after a restart; recovery
// keeps the highest version and names every slot it drops, by reason.
TEST_F(Hdf5TierTest, HigherVersionReplacesTheBlockAndRecoveryKeepsIt) {
  auto v1 = RandomBytes(4096, 1), v2 = RandomBytes(4096, 2);
  std::vector<std::byte> out(4096);
  {
    auto t = OpenTier(Options());
    ASSERT_TRUE(t->Spill("k", 1, v1, Checksum64(v1.data(), v1.size()), nullptr).ok());
    ASSERT_TRUE(t->Spill("k", 2, v2, Checksum64(v2.data(), v2.size()), nullptr).ok());
    t->Drain();
    std::promise<Status> older;
    ASSERT_TRUE(t->Spill("k", 1, v1, Checksum64(v1.data(), v1.size()), [&](Result<SsdBlock> r) {
                   older.set_value(r.status());
                 }).ok());
    t->Drain();
    EXPECT_EQ(older.get_future().get().code(), ErrorCode::kAlreadyExists);
    EXPECT_EQ(t->Read("k", 1, out).status().code(), ErrorCode::kNotFound);
    ASSERT_TRUE(t->Read("k", 2, out).ok());
    EXPECT_EQ(out, v2);
  }
  RecoveryReport report;
  auto t = OpenTier(Options(), &report);
  ASSERT_EQ(report.blocks.size(), 1u);
  EXPECT_EQ(report.blocks[0].version, 2u);
  EXPECT_EQ(report.dropped_superseded, 1u);
  EXPECT_EQ(report.max_version, 2u);
  ASSERT_EQ(report.file_notes.size(), 1u);
  EXPECT_NE(report.file_notes[0].find("1 superseded"), std::string::npos) << report.file_notes[0];
  ASSERT_TRUE(t->Read("k", 2, out).ok());
  EXPECT_EQ(out, v2);
}

TEST_F(Hdf5TierTest, TombstoneHidesTheVersionAndKeepsItGoneAfterARestart) {
  auto v1 = RandomBytes(4096, 1), v3 = RandomBytes(4096, 3);
  std::vector<std::byte> out(4096);
  {
    auto t = OpenTier(Options());
    ASSERT_TRUE(t->Spill("k", 1, v1, Checksum64(v1.data(), v1.size()), nullptr).ok());
    ASSERT_TRUE(t->Spill("other", 1, v1, Checksum64(v1.data(), v1.size()), nullptr).ok());
    t->Drain();
    ASSERT_TRUE(t->Tombstone("k", 1).ok());
    EXPECT_EQ(t->Read("k", 1, out).status().code(), ErrorCode::kNotFound);
    // A spill of the removed version that arrives late is refused, a newer one is taken.
    std::promise<Status> late;
    ASSERT_TRUE(t->Spill("k", 1, v1, Checksum64(v1.data(), v1.size()), [&](Result<SsdBlock> r) {
                   late.set_value(r.status());
                 }).ok());
    t->Drain();
    EXPECT_EQ(late.get_future().get().code(), ErrorCode::kAlreadyExists);
    ASSERT_TRUE(t->Tombstone("gone", 7).ok());  // a key the tier never held: harmless
  }
  {
    RecoveryReport report;
    auto t = OpenTier(Options(), &report);
    EXPECT_EQ(report.recovered, 1u);  // "other"
    EXPECT_EQ(report.dropped_tombstoned, 1u);
    EXPECT_EQ(report.tombstones, 2u);
    EXPECT_EQ(report.max_version, 7u);
    EXPECT_EQ(t->Read("k", 1, out).status().code(), ErrorCode::kNotFound);
    ASSERT_TRUE(t->Spill("k", 3, v3, Checksum64(v3.data(), v3.size()), nullptr).ok());
    t->Drain();
  }
  RecoveryReport report;
  auto t = OpenTier(Options(), &report);
  EXPECT_EQ(report.recovered, 2u);  // "other" and k version 3, above the tombstone
  ASSERT_TRUE(t->Read("k", 3, out).ok());
  EXPECT_EQ(out, v3);
}

// The LRU deletes the bucket holding a tombstone while an older bucket still holds the removed
// block: the tombstone is written again into the next bucket, so recovery does not resurrect it.
TEST_F(Hdf5TierTest, TombstoneOutlivesTheDeletionOfItsBucket) {
  Hdf5TierOptions o = Options();
  o.bucket_bytes = 1 << 20;
  o.capacity = 2 << 20;  // two buckets
  o.bucket_entries = 8;
  auto k = RandomBytes(256 << 10, 1), fill = RandomBytes(256 << 10, 2);
  const uint64_t ks = Checksum64(k.data(), k.size()), fs = Checksum64(fill.data(), fill.size());
  std::vector<std::byte> out(256 << 10);
  {
    // A bucket holds three 256 KiB records (each with its key) and a tombstone.
    auto t = OpenTier(o);
    auto spill = [&](const std::string& key, const std::vector<std::byte>& v, uint64_t sum) {
      ASSERT_TRUE(t->Spill(key, 1, v, sum, nullptr).ok());
      t->Drain();
    };
    spill("k", k, ks);  // bucket A: k, a0, a1
    spill("a0", fill, fs);
    spill("a1", fill, fs);
    spill("b0", fill, fs);  // bucket B: b0, the tombstone of k, b1, b2
    ASSERT_TRUE(t->Tombstone("k", 1).ok());
    spill("b1", fill, fs);
    spill("b2", fill, fs);
    ASSERT_TRUE(t->Read("a0", 1, out).ok());  // A is now more recently used than B
    spill("c0", fill, fs);                    // no room for a third bucket: B is deleted
    EXPECT_EQ(t->Stats().dropped_by_lru, 3u);
    ASSERT_TRUE(t->Read("a0", 1, out).ok());
  }
  RecoveryReport report;
  auto t = OpenTier(o, &report);
  EXPECT_EQ(t->Read("k", 1, out).status().code(), ErrorCode::kNotFound) << "k came back";
}

}  // namespace
}  // namespace mooncake::store::hdf5

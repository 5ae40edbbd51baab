// Whole distributions between the ranks of an in-process loopback cluster: a source registers
// an object, receivers fetch it at once from it and from each other, and every byte arrives.
// Also a damaged holder, a holder that stops answering, and files fetched over a partial copy.
#include "p2p/p2p_node.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "../support/scratch_dir.h"
#include "common/checksum.h"
#include "transport/loopback/loopback_transport.h"
#include "transport/rpc.h"

namespace mooncake::p2p {
namespace {

using test_support::ScratchDir;

// `world` ranks in one process; rank 0 runs the tracker. Peers are never declared dead here
// (no heartbeats run): the liveness rules have their own tests (tracker_test.cc).
class Cluster {
 public:
  explicit Cluster(int world, P2pConfig config = TestConfig()) {
    transports_ = transport::CreateLoopbackCluster(world, &hub_);
    tracker_ = std::make_unique<Tracker>(TrackerConfig{world, Nanos(60'000'000'000), 3}, clock_);
    for (int r = 0; r < world; ++r)
      rpcs_.push_back(std::make_unique<transport::Rpc>(*transports_[r]));
    ServeTracker(*tracker_, *rpcs_[0]);
    for (int r = 0; r < world; ++r) {
      clients_.push_back(r == 0
                             ? MakeLocalTrackerClient(*tracker_, Rank{0})
                             : MakeRemoteTrackerClient(*rpcs_[r], Rank{0}, Nanos(5'000'000'000)));
      nodes_.push_back(std::make_unique<P2pNode>(config, *transports_[r], *clients_[r]));
    }
  }
  ~Cluster() {
    nodes_.clear();
    for (auto& rpc : rpcs_) rpc->Stop();
    for (auto& t : transports_) (void)t->Close(Nanos(1'000'000'000));
  }
  static P2pConfig TestConfig() {
    P2pConfig c;
    c.piece_size = 4096;
    c.fetch.update_interval = Nanos(1'000'000);
    // Long enough that a live holder's delivery thread descheduled beside other tests is not
    // taken for a silent one (a failed holder is dropped for the whole fetch).
    c.fetch.piece_timeout = Nanos(2'000'000'000);
    c.fetch.stall_timeout = Nanos(5'000'000'000);
    c.lookup_timeout = Nanos(5'000'000'000);
    return c;
  }
  P2pNode& node(int r) { return *nodes_[r]; }
  transport::LoopbackHub& hub() { return *hub_; }

 private:
  SteadyClock clock_;
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::unique_ptr<Tracker> tracker_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  std::vector<std::unique_ptr<TrackerClient>> clients_;
  std::vector<std::unique_ptr<P2pNode>> nodes_;
};

// A folder "ckpt" of files of the given sizes with random bytes.
std::string MakeFolder(const ScratchDir& dir, const std::vector<size_t>& sizes) {
  std::mt19937_64 rng(42);
  const std::string root = dir / "ckpt";
  std::filesystem::create_directories(root + "/sub");
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string bytes(sizes[i], '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::ofstream(root + (i % 2 ? "/sub/f" : "/f") + std::to_string(i), std::ios::binary) << bytes;
  }
  return root;
}

std::vector<SourceFile> Scan(const std::string& path) {
  auto files = ScanSource(path);
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  return files.ok() ? *files : std::vector<SourceFile>{};
}

Manifest RegisterSource(P2pNode& node, const std::vector<SourceFile>& files, bool in_memory,
                        bool damage = false) {
  std::unique_ptr<LocalObject> copy;
  auto m = node.PrepareSource("ckpt", files, in_memory, damage, &copy);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (damage) {  // one byte of every piece, after the manifest was made from the good bytes
    const PieceLayout layout(m->entries, m->piece_size);
    for (size_t p = 0; p < layout.count(); ++p) {
      copy->entry_data(layout[p].entry)[layout[p].offset + layout[p].length / 2] ^= std::byte{1};
    }
  }
  EXPECT_TRUE(node.Register(*m, std::move(copy)).ok());
  return *m;
}

// Every byte of `node`'s copy of "ckpt" equals the source files.
void ExpectSameBytes(P2pNode& node, const std::vector<SourceFile>& files) {
  LocalObject* copy = node.Held("ckpt");
  ASSERT_NE(copy, nullptr);
  for (size_t e = 0; e < files.size(); ++e) {
    std::ifstream in(files[e].file, std::ios::binary);
    std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_EQ(want.size(), copy->entries()[e].size);
    if (want.empty()) continue;
    EXPECT_EQ(std::memcmp(copy->entry_data(e), want.data(), want.size()), 0) << files[e].file;
  }
}

TEST(P2pNode, ThreeReceiversFetchAtOnceAndEveryByteArrives) {
  ScratchDir dir("p2p-test");
  const auto files = Scan(MakeFolder(dir, {0, 1, 4095, 4096, 4097, 50'000, 130'001}));
  Cluster cluster(4);
  const Manifest m = RegisterSource(cluster.node(0), files, /*in_memory=*/true);
  std::vector<Result<FetchStats>> stats(4, Internal("not run"));
  std::vector<std::thread> threads;
  for (int r = 1; r <= 3; ++r) {
    threads.emplace_back([&, r] {
      FetchOptions o;
      o.stripe = r - 1;
      o.stripes = 3;
      stats[r] = cluster.node(r).Fetch("ckpt", FetchTarget{}, o);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 1; r <= 3; ++r) {
    ASSERT_TRUE(stats[r].ok()) << r << ": " << stats[r].status().ToString();
    EXPECT_EQ(stats[r]->from_source + stats[r]->from_peers, m.checksums.size());
    EXPECT_EQ(stats[r]->bytes, m.total_bytes());
    ExpectSameBytes(cluster.node(r), files);
  }
}

TEST(P2pNode, ALaterReceiverReadsFromReceiversNotTheSource) {
  ScratchDir dir("p2p-test");
  const auto files = Scan(MakeFolder(dir, {100'000, 30'000}));
  Cluster cluster(3);
  const Manifest m = RegisterSource(cluster.node(0), files, /*in_memory=*/false);
  ASSERT_TRUE(cluster.node(1).Fetch("ckpt", FetchTarget{}, {}).ok());
  auto second = cluster.node(2).Fetch("ckpt", FetchTarget{}, {});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->from_source, 0u);
  EXPECT_EQ(second->from_peers, m.checksums.size());
  ExpectSameBytes(cluster.node(2), files);
}

TEST(P2pNode, DamagedPiecesAreDetectedAndReadFromAnotherHolder) {
  ScratchDir dir("p2p-test");
  const auto files = Scan(MakeFolder(dir, {200'000}));
  Cluster cluster(3);
  const Manifest m = RegisterSource(cluster.node(0), files, /*in_memory=*/true);
  RegisterSource(cluster.node(1), files, /*in_memory=*/false, /*damage=*/true);
  auto stats = cluster.node(2).Fetch("ckpt", FetchTarget{}, {});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_GT(stats->corrupt, 0u);
  EXPECT_LE(stats->corrupt, 3u);  // the tracker bans a holder after 3 damaged pieces
  ExpectSameBytes(cluster.node(2), files);
  // Rank 1 mapped the file copy-on-write: damaging what it served left the file intact.
  std::ifstream in(files[0].file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t p = 0; p < m.checksums.size(); ++p) {
    const size_t off = p * m.piece_size;
    EXPECT_EQ(Checksum64(bytes.data() + off, std::min<size_t>(m.piece_size, bytes.size() - off)),
              m.checksums[p]);
  }
}

TEST(P2pNode, AHolderThatStopsAnsweringIsSkipped) {
  ScratchDir dir("p2p-test");
  const auto files = Scan(MakeFolder(dir, {64 * 4096}));
  Cluster cluster(3);
  transport::SetLoopbackMapping(cluster.hub(), false);  // every read goes through Submit
  RegisterSource(cluster.node(0), files, true);
  RegisterSource(cluster.node(1), files, true);
  transport::SetLoopbackRankPaused(cluster.hub(), Rank{1}, true);
  auto stats = cluster.node(2).Fetch("ckpt", FetchTarget{}, {});
  transport::SetLoopbackRankPaused(cluster.hub(), Rank{1}, false);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_GE(stats->read_failures, 1u);
  ExpectSameBytes(cluster.node(2), files);
}

TEST(P2pNode, FilesAreFetchedOverAPartialCopyKeepingItsGoodPieces) {
  ScratchDir dir("p2p-test");
  const auto files = Scan(MakeFolder(dir, {10 * 4096 + 7, 0, 3 * 4096}));
  Cluster cluster(3);
  const Manifest m = RegisterSource(cluster.node(0), files, false);
  const std::string dest = dir / "dest";
  ASSERT_TRUE(cluster.node(1).Fetch("ckpt", FetchTarget{FetchTarget::Kind::kFiles, dest}, {}).ok());
  for (const auto& f : files) {
    const std::string copy = dest + "/" + f.entry.path;
    ASSERT_TRUE(std::filesystem::exists(copy)) << copy;
    EXPECT_EQ(std::filesystem::file_size(copy), f.entry.size);
  }
  ASSERT_TRUE(cluster.node(1).Unregister("ckpt").ok());
  {  // damage one piece of the first file; rank 2 then finds the rest in place
    std::fstream io(dest + "/" + files[0].entry.path,
                    std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(5000);
    io.put('\x55');
  }
  auto stats = cluster.node(2).Fetch("ckpt", FetchTarget{FetchTarget::Kind::kFiles, dest}, {});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->present, m.checksums.size() - 1);
  EXPECT_EQ(stats->from_source + stats->from_peers, 1u);
  ExpectSameBytes(cluster.node(2), files);
}

TEST(P2pNode, FetchOfAnUnknownObjectFailsAtItsLookupDeadline) {
  P2pConfig config = Cluster::TestConfig();
  config.lookup_timeout = Nanos(50'000'000);
  Cluster cluster(2, config);
  auto stats = cluster.node(1).Fetch("nope", FetchTarget{}, {});
  EXPECT_EQ(stats.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace mooncake::p2p

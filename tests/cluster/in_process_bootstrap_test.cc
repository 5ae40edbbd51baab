// The in-process bootstrap keeps MpiSession's contract, and the peer exchange runs over it and
// the loopback transport in one process: every rank's record, the job token, and a read of a
// peer's region through the descriptors the exchange imported.
#include "cluster/in_process_bootstrap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>

#include "cluster/peer_exchange.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::cluster {
namespace {

using std::chrono::milliseconds;

// Runs `body(rank)` on one thread per rank and waits for all of them.
void OnRanks(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

std::vector<std::byte> Bytes(const std::string& s) {
  auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

TEST(InProcessBootstrapTest, AllGatherGivesEveryRankEveryRecordAndGatherOnlyTheRoot) {
  auto group = InProcessBootstrap::CreateGroup(3);
  std::vector<Records> all(3), gathered(3);
  OnRanks(3, [&](int r) {
    auto a = group[r]->AllGather(Bytes("rank" + std::to_string(r)), "records", milliseconds(5000));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    all[r] = *a;
    auto g = group[r]->Gather(Bytes(std::string(r + 1, 'x')), 2, "to two", milliseconds(5000));
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    gathered[r] = *g;
    ASSERT_TRUE(group[r]->Barrier(milliseconds(5000), "end").ok());
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(all[r].size(), 3u);
    for (int from = 0; from < 3; ++from)
      EXPECT_EQ(all[r][from], Bytes("rank" + std::to_string(from)));
  }
  EXPECT_TRUE(gathered[0].empty());
  EXPECT_TRUE(gathered[1].empty());
  ASSERT_EQ(gathered[2].size(), 3u);
  EXPECT_EQ(gathered[2][1], Bytes("xx"));
}

// Bootstrap::Gather checks the root for every implementation: a rank outside the job is an
// InvalidArgument at once, on every rank, and no rank waits for the step (the next step works).
TEST(InProcessBootstrapTest, AGatherToARankOutsideTheJobIsRefusedAtOnceOnEveryRank) {
  auto group = InProcessBootstrap::CreateGroup(2);
  std::vector<Status> got(2), after(2);
  OnRanks(2, [&](int r) {
    got[r] = group[r]->Gather(Bytes("x"), 2, "to nobody", milliseconds(60000)).status();
    after[r] = group[r]->Barrier(milliseconds(5000), "after");
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r].code(), ErrorCode::kInvalidArgument) << got[r].ToString();
    EXPECT_NE(got[r].message().find("step 'to nobody': gather to rank 2 in a job of 2"),
              std::string::npos)
        << got[r].ToString();
    EXPECT_TRUE(after[r].ok()) << after[r].ToString();
  }
}

// AllGatherText (cluster/bootstrap.h): every rank's text, the empty one included, in rank order.
TEST(InProcessBootstrapTest, AllGatherTextGivesEveryRankEveryTextInRankOrder) {
  auto group = InProcessBootstrap::CreateGroup(3);
  std::vector<std::vector<std::string>> all(3);
  OnRanks(3, [&](int r) {
    auto texts = AllGatherText(*group[r], std::string(r, 'a' + r), "texts", milliseconds(5000));
    ASSERT_TRUE(texts.ok()) << texts.status().ToString();
    all[r] = *texts;
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(all[r], (std::vector<std::string>{"", "b", "cc"}));
}

TEST(InProcessBootstrapTest, AStepARankNeverReachesTimesOutAndTheRootNamesIt) {
  auto group = InProcessBootstrap::CreateGroup(3);
  std::vector<Status> got(2);
  OnRanks(2, [&](int r) { got[r] = group[r]->Barrier(milliseconds(200), "store ready"); });
  EXPECT_EQ(got[0].code(), ErrorCode::kTimeout);
  EXPECT_NE(got[0].message().find("rank 2 never reached step 'store ready'"), std::string::npos)
      << got[0].ToString();
  EXPECT_EQ(group[0]->missing_at_last_step(), std::vector<int>{2});
  EXPECT_EQ(got[1].code(), ErrorCode::kTimeout);
  EXPECT_NE(got[1].message().find("rank 0 names it"), std::string::npos) << got[1].ToString();
  EXPECT_TRUE(group[1]->missing_at_last_step().empty());
}

TEST(InProcessBootstrapTest, PeerExchangeOverLoopbackLetsARankReadAPeersRegion) {
  constexpr int kRanks = 3;
  auto group = InProcessBootstrap::CreateGroup(kRanks, "node7");
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(kRanks, &hub);
  std::vector<std::vector<char>> memory(kRanks, std::vector<char>(4096));
  std::vector<std::vector<PeerInfo>> peers(kRanks);
  std::vector<transport::JobToken> tokens(kRanks);
  std::vector<std::string> read_back(kRanks);
  OnRanks(kRanks, [&](int r) {
    std::memset(memory[r].data(), 'a' + r, memory[r].size());
    auto& t = *transports[r];
    auto region =
        t.RegisterMemory(memory[r].data(), memory[r].size(), transport::MemoryType::kHost);
    ASSERT_TRUE(region.ok()) << region.status().ToString();
    transport::Rpc rpc(t);
    const Role role = r == 0 ? Role::kConductor : Role::kStore;
    auto got = ExchangePeers(*group[r], t, &rpc, role, {*region}, milliseconds(5000));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    peers[r] = *got;
    tokens[r] = rpc.job_token();
    // Read 16 bytes of the next rank's region through the descriptor it exported.
    const auto& theirs = peers[r][(r + 1) % kRanks].regions.at(0);
    std::string buf(16, '\0');
    transport::TransferRequest read;
    read.local = buf.data();
    read.peer = Rank{(r + 1) % kRanks};
    read.remote_addr = theirs.addr;
    read.length = buf.size();
    auto batch = t.Submit(std::span(&read, 1));
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_TRUE((*batch)->Wait(milliseconds(5000)).ok());
    read_back[r] = buf;
    ASSERT_TRUE(group[r]->Barrier(milliseconds(5000), "done").ok());
    rpc.Stop();
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(peers[r].size(), static_cast<size_t>(kRanks));
    EXPECT_EQ(peers[r][0].role, Role::kConductor);
    EXPECT_EQ(peers[r][2].role, Role::kStore);
    EXPECT_EQ(peers[r][1].host, "node7");
    EXPECT_EQ(tokens[r], peers[r][0].token);  // every rank holds rank 0's token
    EXPECT_EQ(read_back[r], std::string(16, static_cast<char>('a' + (r + 1) % kRanks)));
  }
  EXPECT_NE(tokens[0], transport::JobToken{});
}

TEST(InProcessBootstrapTest, TheJobTokenIsTheConductorsWhicheverRankItIs) {
  constexpr int kRanks = 3;
  auto group = InProcessBootstrap::CreateGroup(kRanks, "node7");
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(kRanks, &hub);
  std::vector<std::vector<PeerInfo>> peers(kRanks);
  std::vector<transport::JobToken> tokens(kRanks);
  OnRanks(kRanks, [&](int r) {
    transport::Rpc rpc(*transports[r]);
    const Role role = r == 1 ? Role::kConductor : Role::kStore;
    auto got = ExchangePeers(*group[r], *transports[r], &rpc, role, {}, milliseconds(5000));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    peers[r] = *got;
    tokens[r] = rpc.job_token();
    ASSERT_TRUE(group[r]->Barrier(milliseconds(5000), "done").ok());
    rpc.Stop();
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(peers[r].size(), static_cast<size_t>(kRanks));
    EXPECT_EQ(peers[r][1].role, Role::kConductor);
    EXPECT_EQ(tokens[r], peers[r][1].token) << "rank " << r;
    EXPECT_NE(tokens[r], peers[r][0].token) << "rank " << r;  // rank 0 drew one too
  }
  EXPECT_NE(tokens[1], transport::JobToken{});
}

}  // namespace
}  // namespace mooncake::cluster

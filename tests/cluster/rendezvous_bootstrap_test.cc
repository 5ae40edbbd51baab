// The rendezvous bootstrap keeps MpiSession's contract over TCP on 127.0.0.1 (ranks are threads
// here, each with its own socket): every record to every rank, a gather only at its root, a
// missing rank named by the root, and nothing used from a process without the job's credential
// or from bytes that are not a frame.
#include "cluster/rendezvous_bootstrap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>

#include "cluster/rendezvous_frames.h"

namespace mooncake::cluster {
namespace {

using std::chrono::milliseconds;

std::vector<std::byte> Bytes(const std::string& s) {
  auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

RendezvousConfig ConfigFor(int rank, int size, uint16_t port, const std::string& secret) {
  RendezvousConfig c;
  c.rank = rank;
  c.size = size;
  c.hostname = "node" + std::to_string(rank);
  c.root_host = "127.0.0.1";
  c.root_port = port;
  c.bind_address = "127.0.0.1";
  c.credential = Bytes(secret);
  c.connect_timeout = std::chrono::seconds(10);
  return c;
}

// Rank 0 first (it listens on a port the kernel picks), then ranks 1..size-1 of `joining`.
std::vector<std::unique_ptr<RendezvousBootstrap>> Group(int size, std::vector<int> joining = {},
                                                        const std::string& secret = "s3cret") {
  std::vector<std::unique_ptr<RendezvousBootstrap>> group(size);
  auto root = RendezvousBootstrap::Create(ConfigFor(0, size, 0, secret));
  EXPECT_TRUE(root.ok()) << root.status().ToString();
  group[0] = std::move(*root);
  if (joining.empty()) {
    for (int r = 1; r < size; ++r) joining.push_back(r);
  }
  for (int r : joining) {
    auto b = RendezvousBootstrap::Create(ConfigFor(r, size, group[0]->port(), secret));
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    group[r] = std::move(*b);
  }
  return group;
}

void OnRanks(const std::vector<int>& ranks, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r : ranks) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

TEST(RendezvousBootstrapTest, AllGatherGivesEveryRankEveryRecordAndGatherOnlyItsRoot) {
  auto group = Group(3);
  std::vector<Records> all(3), gathered(3), at_zero(3);
  OnRanks({0, 1, 2}, [&](int r) {
    auto a = group[r]->AllGather(Bytes("rank" + std::to_string(r)), "records", milliseconds(5000));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    all[r] = *a;
    auto g = group[r]->Gather(Bytes(std::string(r + 1, 'x')), 2, "to two", milliseconds(5000));
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    gathered[r] = *g;
    auto z = group[r]->Gather(Bytes(std::string(r + 1, 'z')), 0, "to zero", milliseconds(5000));
    ASSERT_TRUE(z.ok()) << z.status().ToString();
    at_zero[r] = *z;
    ASSERT_TRUE(group[r]->Barrier(milliseconds(5000), "end").ok());
    group[r]->Leave();
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
  ASSERT_EQ(at_zero[0].size(), 3u);
  EXPECT_EQ(at_zero[0][2], Bytes("zzz"));
  EXPECT_TRUE(at_zero[1].empty());
}

TEST(RendezvousBootstrapTest, AStepARankNeverReachesTimesOutAndTheRootNamesIt) {
  auto group = Group(3, {1});  // rank 2 never starts
  std::vector<Status> got(2);
  OnRanks({0, 1}, [&](int r) { got[r] = group[r]->Barrier(milliseconds(300), "store ready"); });
  EXPECT_EQ(got[0].code(), ErrorCode::kTimeout);
  EXPECT_NE(got[0].message().find("rank 2 never reached step 'store ready'"), std::string::npos)
      << got[0].ToString();
  EXPECT_EQ(group[0]->missing_at_last_step(), std::vector<int>{2});
  EXPECT_EQ(got[1].code(), ErrorCode::kTimeout);
  EXPECT_NE(got[1].message().find("rank 0 names it"), std::string::npos) << got[1].ToString();
}

TEST(RendezvousBootstrapTest, AWrongCredentialOrATakenRankIsRefusedAndNamed) {
  auto group = Group(3, {1});
  auto impostor = RendezvousBootstrap::Create(ConfigFor(2, 3, group[0]->port(), "guess"));
  ASSERT_TRUE(impostor.ok());
  auto twin = RendezvousBootstrap::Create(ConfigFor(1, 3, group[0]->port(), "s3cret"));
  ASSERT_TRUE(twin.ok());
  Status root, impostor_got, twin_got;
  std::thread t0([&] { root = group[0]->Barrier(milliseconds(1500), "in"); });
  std::thread t1([&] { (void)group[1]->Barrier(milliseconds(1500), "in"); });
  impostor_got = (*impostor)->Barrier(milliseconds(1500), "in");
  twin_got = (*twin)->Barrier(milliseconds(1500), "in");
  t0.join();
  t1.join();
  EXPECT_EQ(impostor_got.code(), ErrorCode::kPermissionDenied) << impostor_got.ToString();
  EXPECT_NE(impostor_got.message().find("a wrong job credential"), std::string::npos);
  EXPECT_EQ(twin_got.code(), ErrorCode::kPermissionDenied) << twin_got.ToString();
  EXPECT_NE(twin_got.message().find("rank 1, which another process already holds"),
            std::string::npos)
      << twin_got.ToString();
  EXPECT_EQ(root.code(), ErrorCode::kTimeout);  // rank 2 never arrived: the impostor is not it
  EXPECT_EQ(group[0]->missing_at_last_step(), std::vector<int>{2});
}

// A raw socket that writes `bytes` to the root.
void SendRaw(uint16_t port, const std::vector<std::byte>& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

TEST(RendezvousBootstrapTest, ForgedFramesAreDroppedAndTheJobGoesOn) {
  auto group = Group(2);
  // A contribution for rank 1 from a process that never said hello, and a header announcing
  // more than the frame limit: neither may reach the step.
  SendRaw(group[0]->port(),
          rendezvous::EncodeFrame({rendezvous::FrameKind::kContribute, 0, 1, Bytes("forged")}));
  auto huge = rendezvous::EncodeFrame({rendezvous::FrameKind::kHello, 0, 1, {}});
  const uint64_t too_long = rendezvous::kMaxPayload + 1;
  std::memcpy(huge.data() + rendezvous::kHeaderBytes - 8, &too_long, 8);
  SendRaw(group[0]->port(), huge);
  std::vector<Records> all(2);
  OnRanks({0, 1}, [&](int r) {
    auto a = group[r]->AllGather(Bytes("real" + std::to_string(r)), "records", milliseconds(5000));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    all[r] = *a;
  });
  EXPECT_EQ(all[0][1], Bytes("real1"));
  EXPECT_EQ(all[1][1], Bytes("real1"));
}

TEST(RendezvousFramesTest, MalformedRecordSetsAreRefused) {
  auto good = rendezvous::EncodeRecords({Bytes("a"), Bytes("bc")});
  auto back = rendezvous::DecodeRecords(good);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[1], Bytes("bc"));
  auto cut = good;
  cut.pop_back();
  EXPECT_EQ(rendezvous::DecodeRecords(cut).status().code(), ErrorCode::kProtocolError);
  std::vector<std::byte> many(4, std::byte{0xff});  // 4 G records announced in 4 bytes
  EXPECT_EQ(rendezvous::DecodeRecords(many).status().code(), ErrorCode::kProtocolError);
}

}  // namespace
}  // namespace mooncake::cluster

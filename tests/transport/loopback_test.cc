#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>
#include <vector>

#include "transport/host_buffer.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::transport {
namespace {

using std::chrono::milliseconds;

class LoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ranks_ = CreateLoopbackCluster(2, &hub_);
    target_.resize(4096);
    auto region = ranks_[1]->RegisterMemory(target_.data(), target_.size(), MemoryType::kHost);
    ASSERT_TRUE(region.ok());
    region_ = *region;
    auto desc = ranks_[1]->Export(*region);
    ASSERT_TRUE(desc.ok());
    ASSERT_TRUE(ranks_[0]->Import(Rank{1}, *desc).ok());
  }
  uint64_t remote(size_t offset) { return reinterpret_cast<uint64_t>(target_.data()) + offset; }

  // Declared first, so destroyed last: rank 1's delivery thread reads it until ranks_ is gone.
  std::vector<std::byte> target_;
  std::shared_ptr<LoopbackHub> hub_;
  std::vector<std::unique_ptr<Transport>> ranks_;
  MemoryRegion region_;
};

TEST_F(LoopbackTest, WriteThenReadMovesBytes) {
  std::vector<std::byte> src(1000), dst(1000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 7);
  TransferRequest w{OpKind::kWrite, src.data(), Rank{1}, remote(100), src.size()};
  auto batch = ranks_[0]->Submit(std::span(&w, 1));
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE((*batch)->Wait(milliseconds(10000)).ok());
  TransferRequest r{OpKind::kRead, dst.data(), Rank{1}, remote(100), dst.size()};
  auto rb = ranks_[0]->Submit(std::span(&r, 1));
  ASSERT_TRUE((*rb)->Wait(milliseconds(10000)).ok());
  EXPECT_EQ(src, dst);
  EXPECT_EQ((*rb)->Poll(), BatchState::kCompleted);
}

// HostBuffer on a backend without memory of its own (loopback): page-aligned heap, faulted in
// over its whole pages before it is registered, its region the size asked for, readable by a
// peer.
TEST_F(LoopbackTest, AHostBufferFallsBackToRegisteredHeapThatAPeerReads) {
  size_t faulted = 0;
  auto buffer = HostBuffer::Create(*ranks_[1], 5000, /*transport_memory=*/true,
                                   [&](std::byte* data, size_t bytes) {
                                     faulted = bytes;
                                     std::fill(data, data + bytes, std::byte{0x5a});
                                   });
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_EQ(faulted, 8192u);
  EXPECT_EQ(buffer->size(), 5000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 4096, 0u);
  auto desc = ranks_[1]->Export(buffer->region());
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  ASSERT_TRUE(ranks_[0]->Import(Rank{1}, *desc).ok());
  std::vector<std::byte> dst(16);
  TransferRequest r{OpKind::kRead, dst.data(), Rank{1},
                    reinterpret_cast<uint64_t>(buffer->data()) + 4984, dst.size()};
  auto rb = ranks_[0]->Submit(std::span(&r, 1));
  ASSERT_TRUE(rb.ok());
  ASSERT_TRUE((*rb)->Wait(milliseconds(10000)).ok());
  EXPECT_EQ(dst, std::vector<std::byte>(16, std::byte{0x5a}));
}

TEST_F(LoopbackTest, OutOfRangeAndUnregisteredAddressesFailPerRequest) {
  std::vector<std::byte> buf(64);
  std::vector<TransferRequest> reqs = {
      {OpKind::kRead, buf.data(), Rank{1}, remote(0), 64},     // fine
      {OpKind::kRead, buf.data(), Rank{1}, remote(4090), 64},  // runs past the end
      {OpKind::kRead, buf.data(), Rank{1}, 0x1000, 64},        // never registered
      {OpKind::kRead, buf.data(), Rank{5}, remote(0), 64},     // no such rank
  };
  auto batch = ranks_[0]->Submit(reqs);
  ASSERT_TRUE(batch.ok());
  Status s = (*batch)->Wait(milliseconds(10000));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  auto per = (*batch)->RequestStatus();
  EXPECT_TRUE(per[0].ok());
  EXPECT_EQ(per[1].code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(per[1].message().find("rank 1"), std::string::npos);
  EXPECT_EQ(per[2].code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(per[3].code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ((*batch)->Poll(), BatchState::kFailed);
}

TEST_F(LoopbackTest, MappedAddressOnlyForWhollyRegisteredRangesOfThatPeer) {
  std::byte* base = target_.data();
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(0), 4096), base);
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(100), 1), base + 100);
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(4095), 2), nullptr);  // past the end
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(0), ~size_t{0}), nullptr);
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, ~uint64_t{0} - 8, 64), nullptr);  // wraps
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{0}, remote(0), 64), nullptr);         // not that rank's
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{7}, remote(0), 64), nullptr);         // no such rank
  SetLoopbackMapping(*hub_, false);  // as over a network: callers must go through Submit
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(0), 64), nullptr);
  SetLoopbackMapping(*hub_, true);
  ASSERT_TRUE(ranks_[1]->UnregisterMemory(region_).ok());  // the owner took it back
  EXPECT_EQ(ranks_[0]->MappedAddress(Rank{1}, remote(0), 64), nullptr);
}

TEST_F(LoopbackTest, PausedPeerMakesWaitTimeOutNamingThePeer) {
  SetLoopbackRankPaused(*hub_, Rank{1}, true);
  std::vector<std::byte> buf(64);
  TransferRequest r{OpKind::kRead, buf.data(), Rank{1}, remote(0), 64};
  auto batch = ranks_[0]->Submit(std::span(&r, 1));
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)->Poll(), BatchState::kInProgress);
  Status s = (*batch)->Wait(milliseconds(50));
  EXPECT_EQ(s.code(), ErrorCode::kTimeout);
  EXPECT_NE(s.message().find("rank(s) 1"), std::string::npos) << s.message();
  auto per = (*batch)->RequestStatus();
  EXPECT_EQ(per[0].code(), ErrorCode::kBusy);  // in progress is a state, not an error
  SetLoopbackRankPaused(*hub_, Rank{1}, false);
  EXPECT_TRUE((*batch)->Wait(milliseconds(10000)).ok());
}

// The failure model (docs/FAULTS.md): once membership declares a rank dead, a wait on a transfer
// to it ends with PeerFailure naming it at once, not at its deadline, and new ones fail at submit.
TEST_F(LoopbackTest, PeerDeclaredDeadEndsTheWaitBeforeItsDeadline) {
  SetLoopbackRankPaused(*hub_, Rank{1}, true);  // stopped: it never answers
  std::vector<std::byte> buf(64);
  TransferRequest r{OpKind::kRead, buf.data(), Rank{1}, remote(0), 64};
  auto batch = ranks_[0]->Submit(std::span(&r, 1));
  ASSERT_TRUE(batch.ok());
  std::thread membership([&] {
    std::this_thread::sleep_for(milliseconds(20));
    ranks_[0]->MarkPeerDead(Rank{1}, "no heartbeat");
  });
  const auto start = std::chrono::steady_clock::now();
  Status s = (*batch)->Wait(std::chrono::seconds(30));
  const auto waited = std::chrono::steady_clock::now() - start;
  membership.join();
  EXPECT_EQ(s.code(), ErrorCode::kPeerFailure) << s.ToString();
  EXPECT_NE(s.message().find("rank(s) 1"), std::string::npos) << s.message();
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_TRUE(ranks_[0]->PeerDead(Rank{1}));
  EXPECT_FALSE(ranks_[0]->PeerDead(Rank{0}));

  auto refused = ranks_[0]->Submit(std::span(&r, 1));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ((*refused)->Wait(milliseconds(10000)).code(), ErrorCode::kPeerFailure);
  // Rank 1 stays stopped and is closed, which drops the abandoned read. Resumed, it copied into
  // `buf` after the wait had returned (the batch had already failed), and under ASan after the
  // test had freed `buf` and target_.
  EXPECT_TRUE(ranks_[1]->Close(milliseconds(10000)).ok());
}

}  // namespace
}  // namespace mooncake::transport

// A store rank's SSD recovery report reaches the master over the RPC in parts (no MPI gather):
// the parts add up to the whole report, the master admits every block, and a rank that is not
// a store rank of the job is refused (it could point clients at data that is not there).
#include <gtest/gtest.h>

#include <cstdlib>

#include "store/net/messages.h"
#include "store/node/master_node.h"
#include "store/node/store_rank_node.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::store {
namespace {

RecoveredBlocks Report(int blocks) {
  RecoveredBlocks all;
  all.dropped = 7;
  all.dropped_torn = 3;
  all.dropped_superseded = 4;
  all.files = 2;
  all.max_version = 1000 + blocks;
  for (int i = 0; i < blocks; ++i) {
    all.blocks.push_back({"key/" + std::to_string(i), 100 + static_cast<uint64_t>(i), 64,
                          0xabc + static_cast<uint64_t>(i), static_cast<uint64_t>(i) * 64});
  }
  return all;
}

TEST(RecoveryReportTest, PartsAddUpToTheWholeReport) {
  const RecoveredBlocks all = Report(1000);
  auto parts = SplitRecovered(all, 4096);
  ASSERT_GT(parts.size(), 5u);
  RecoveryTotals sum;
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(parts[i].max_version, all.max_version) << "part " << i;
    EXPECT_LE(Encode(parts[i]).size(), 4096u + 200) << "part " << i;
    EXPECT_FALSE(parts[i].blocks.empty()) << "part " << i;
    sum.Add(parts[i]);
  }
  EXPECT_EQ(sum.recovered, 1000u);
  EXPECT_EQ(sum.dropped, 7u);  // counted once, not once per part
  EXPECT_EQ(sum.torn, 3u);
  ASSERT_EQ(sum.keys.size(), 1000u);
  EXPECT_EQ(sum.keys.front(), "key/0");
  EXPECT_EQ(sum.keys.back(), "key/999");
  EXPECT_EQ(SplitRecovered(RecoveredBlocks{}).size(), 1u);  // an empty tier still reports
}

TEST(RecoveryReportTest, TheMasterAdmitsAStoreRanksPartsAndRefusesAnyoneElse) {
  constexpr int kMaster = 0, kStore = 1, kOther = 2;
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(3, &hub);
  std::vector<std::unique_ptr<transport::Rpc>> rpcs;
  for (auto& t : transports) rpcs.push_back(std::make_unique<transport::Rpc>(*t));
  std::vector<std::byte> segment(1 << 20);
  auto region = transports[kStore]->RegisterMemory(segment.data(), segment.size(),
                                                   transport::MemoryType::kHost);
  ASSERT_TRUE(region.ok());
  std::vector<std::vector<transport::RemoteDescriptor>> regions(3);
  regions[kStore].push_back(*transports[kStore]->Export(*region));
  auto topology = StoreTopology::FromRegions({kStore}, regions);
  ASSERT_TRUE(topology.ok());
  MasterNodeConfig config;
  config.ssd = true;
  MasterNode master(config, *transports[kMaster], *rpcs[kMaster], *topology);
  ASSERT_TRUE(master.Start().ok());

  const auto type = StoreMsg::kRecoveryReport;
  const RecoveredBlocks all = Report(50);
  for (const auto& part : SplitRecovered(all, 512)) {
    auto answer = rpcs[kStore]->Call(Rank{kMaster}, type, Encode(part), std::chrono::seconds(10));
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  }
  auto forged =
      rpcs[kOther]->Call(Rank{kMaster}, type, Encode(Report(1)), std::chrono::seconds(10));
  EXPECT_EQ(forged.status().code(), ErrorCode::kPermissionDenied) << forged.status().ToString();
  EXPECT_NE(forged.status().message().find("rank 2 sent an SSD recovery report"),
            std::string::npos);
  auto malformed =
      rpcs[kStore]->Call(Rank{kMaster}, type, std::vector<std::byte>(3), std::chrono::seconds(10));
  EXPECT_FALSE(malformed.ok());

  const RecoveryTotals got = master.recovery();
  EXPECT_EQ(got.recovered, 50u);
  EXPECT_EQ(got.dropped, 7u);
  EXPECT_EQ(master.coordinator()->Stats().recovered, 50u);
  const bool found = master.service().WithMaster(
      [](MetadataMaster& m) { return m.Exists("key/49").ok() && !m.Exists("key/0.0").ok(); });
  EXPECT_TRUE(found);
  master.Stop();
  for (auto& r : rpcs) r->Stop();
}

}  // namespace
}  // namespace mooncake::store

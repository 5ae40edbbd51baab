// The connection file's parser (client/connection_file.h): every field is bounded before
// anything is sized from it, and errors name the field and the file.
#include "client/connection_file.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace mooncake::client {
namespace {

using nlohmann::json;

json Valid() {
  ConnectionInfo info;
  info.token = transport::JobToken{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  info.world_size = 4;
  info.master_addresses = {"127.0.0.1:41000"};
  info.store_ranks = {1, 2, 3};
  info.dram_per_rank = 1 << 30;
  return json::parse(ConnectionFileText(info));
}

Status Parse(const json& j) { return ParseConnectionFile(j.dump(), "/run/connect.json").status(); }

void ExpectRefused(const json& j, const std::string& field) {
  Status s = Parse(j);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << field;
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("/run/connect.json"), std::string::npos) << s.message();
}

TEST(ConnectionFile, ValidFileRoundTrips) {
  auto info = ParseConnectionFile(Valid().dump(), "f");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->world_size, 4);
  EXPECT_EQ(info->store_ranks, (std::vector<int>{1, 2, 3}));
  auto again = ParseConnectionFile(ConnectionFileText(*info), "f");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->token, info->token);
  EXPECT_EQ(again->master_addresses, info->master_addresses);
}

TEST(ConnectionFile, HugeWorldSizeIsRefusedNamingTheField) {
  json j = Valid();
  for (json bad : {json(2147483647), json(kMaxJobRanks + 1), json(-4), json(1), json(4.5),
                   json("4"), json(18446744073709551615ULL)}) {
    j["world_size"] = bad;
    ExpectRefused(j, "world_size");
  }
  j["world_size"] = kMaxJobRanks;
  EXPECT_TRUE(Parse(j).ok());
}

TEST(ConnectionFile, EveryBoundedFieldIsChecked) {
  json j = Valid();
  j["master"]["rank"] = 4;
  ExpectRefused(j, "master.rank");
  j = Valid();
  j["master"]["addresses"] = json::array();
  for (size_t i = 0; i <= kMaxMasterAddresses; ++i) j["master"]["addresses"].push_back("h:1");
  ExpectRefused(j, "master.addresses");
  j = Valid();
  j["master"]["addresses"] = {std::string(300, 'h') + ":1"};
  ExpectRefused(j, "master.addresses");
  j = Valid();
  j["store"]["ranks"] = {1, 2, 3, 4, 5};
  ExpectRefused(j, "store.ranks");
  j = Valid();
  j["store"]["ranks"] = {1, 9};
  ExpectRefused(j, "store.ranks");
  j = Valid();
  j["store"]["replicas"] = 0;
  ExpectRefused(j, "store.replicas");
  j = Valid();
  j["store"]["dram_per_rank"] = -1;
  ExpectRefused(j, "store.dram_per_rank");
  j = Valid();
  j["run_dir"] = std::string(kMaxTextFieldLength + 1, 'r');
  ExpectRefused(j, "run_dir");
  j = Valid();
  j["pid"] = -1;
  ExpectRefused(j, "pid");
}

// A store job with a standby conductor (docs/FAULTS.md): both conductors, which one is active,
// the epoch.
json TwoConductors() {
  json j = Valid();
  j["conductors"] = {{{"rank", 0}, {"addresses", {"127.0.0.1:41000"}}, {"active", true}},
                     {{"rank", 1}, {"addresses", {"127.0.0.1:41873"}}, {"active", false}}};
  j["epoch"] = 1;
  return j;
}

TEST(ConnectionFile, EveryConductorRoundTripsWithTheEpoch) {
  auto info = ParseConnectionFile(TwoConductors().dump(), "f");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->conductors.size(), 2u);
  EXPECT_EQ(info->conductors[1].rank, 1);
  EXPECT_EQ(info->conductors[1].addresses, std::vector<std::string>{"127.0.0.1:41873"});
  EXPECT_TRUE(info->conductors[0].active);
  EXPECT_FALSE(info->conductors[1].active);
  EXPECT_EQ(info->epoch, 1u);
  auto again = ParseConnectionFile(ConnectionFileText(*info), "f");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->conductors, info->conductors);
  EXPECT_EQ(again->epoch, 1u);
}

TEST(ConnectionFile, AFileWithoutConductorsReadsAsItsMasterAlone) {
  json j = Valid();  // as written before the conductors were listed
  j.erase("conductors");
  j.erase("epoch");
  auto info = ParseConnectionFile(j.dump(), "f");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->conductors.size(), 1u);
  EXPECT_EQ(info->conductors[0].rank, 0);
  EXPECT_EQ(info->conductors[0].addresses, info->master_addresses);
  EXPECT_TRUE(info->conductors[0].active);
  EXPECT_EQ(info->epoch, 0u);
}

TEST(ConnectionFile, ConductorsAreCheckedNamingTheEntry) {
  json j = TwoConductors();
  j["conductors"][1]["active"] = true;  // two active: the second is not the master
  ExpectRefused(j, "conductors[1] (rank 1) is marked active");
  j = TwoConductors();
  j["conductors"][0]["active"] = false;
  ExpectRefused(j, "conductors marks 0");
  j = TwoConductors();
  j["master"]["rank"] = 1;  // the file's master is not the conductor marked active
  ExpectRefused(j, "conductors[0]");
  j = TwoConductors();
  j["conductors"][1]["rank"] = 4;
  ExpectRefused(j, "conductors[1].rank");
  j = TwoConductors();
  j["conductors"][1]["rank"] = 0;
  ExpectRefused(j, "conductors[1]");
  j = TwoConductors();
  j["conductors"][1]["addresses"] = json::array();
  ExpectRefused(j, "conductors[1].addresses");
  j = TwoConductors();
  j["conductors"][1]["addresses"] = {"no-port"};
  ExpectRefused(j, "conductors[1].addresses");
  j = TwoConductors();
  j["conductors"][1]["active"] = "no";
  ExpectRefused(j, "conductors[1].active");
  j = TwoConductors();
  for (size_t i = 2; i <= kMaxConductors; ++i) j["conductors"].push_back(j["conductors"][1]);
  ExpectRefused(j, "conductors");
  j = TwoConductors();
  j["epoch"] = -1;
  ExpectRefused(j, "epoch");
}

TEST(ConnectionFile, OversizedFileIsRefusedUnparsed) {
  const std::string text(kMaxConnectionFileBytes + 1, ' ');
  Status s = ParseConnectionFile(text, "/big.json").status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("/big.json"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mooncake::client

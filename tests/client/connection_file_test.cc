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

TEST(ConnectionFile, OversizedFileIsRefusedUnparsed) {
  const std::string text(kMaxConnectionFileBytes + 1, ' ');
  Status s = ParseConnectionFile(text, "/big.json").status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("/big.json"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mooncake::client

// The paper's experiments through `mooncake eval` and the shipped configs, on the real
// conversation trace (../shared/traces; skipped when absent): the orders the paper reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../support/scratch_dir.h"
#include "eval/eval_command.h"

namespace mooncake::eval {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = MOONCAKE_SOURCE_DIR;
const std::string kTrace = kRoot + "/../shared/traces/conversation_trace.jsonl";

// Runs a sweep and returns sweep.csv as rows of column -> value.
std::vector<std::map<std::string, std::string>> Sweep(std::vector<std::string> args,
                                                      const std::string& name) {
  const std::string out = test_support::BinaryScratchDir() / name;
  args.insert(args.begin(), "eval");
  for (std::string a : {"--trace", kTrace.c_str(), "--out", out.c_str(), "--plots=false"}) {
    args.push_back(a);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  EXPECT_EQ(RunEvalCommand(static_cast<int>(argv.size()), argv.data()), 0);
  std::ifstream in(out + "/sweep.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::map<std::string, std::string> row;
    size_t i = 0;
    for (std::string c; std::getline(ls, c, ',') && i < header.size(); ++i) row[header[i]] = c;
    rows.push_back(row);
  }
  return rows;
}

TEST(PaperExperiments, Fig5MeanTtftOrdersAsThePaper) {
  if (!fs::exists(kTrace)) GTEST_SKIP() << kTrace << " is absent";
  auto rows = Sweep({"--config", kRoot + "/configs/paper/fig5_policies.ini", "--sweep",
                     "conductor.policy=random,load_balance,cache_aware,kvcache_centric"},
                    "fig5");
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, double> ttft;
  for (auto& r : rows) ttft[r["policy"]] = std::stod(r["ttft_mean_s"]);
  EXPECT_GT(ttft["random"], ttft["load_balance"]);
  EXPECT_GT(ttft["load_balance"], ttft["cache_aware"]);
  EXPECT_GE(ttft["cache_aware"], ttft["kvcache_centric"]);
}

TEST(PaperExperiments, Fig1MooncakeServesMoreEffectiveRequestsThanVllm) {
  if (!fs::exists(kTrace)) GTEST_SKIP() << kTrace << " is absent";
  auto rows = Sweep({"--sweep", "config=" + kRoot + "/configs/paper/fig1_mooncake.ini," + kRoot +
                                    "/configs/paper/fig1_vllm.ini"},
                    "fig1");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0]["system"], "mooncake");
  ASSERT_EQ(rows[1]["system"], "vllm");
  for (const char* col : {"capacity_100ms", "capacity_200ms", "capacity_300ms"}) {
    EXPECT_GT(std::stod(rows[0][col]), std::stod(rows[1][col])) << col;
  }
  EXPECT_EQ(rows[0]["lost"], "0");
  EXPECT_EQ(rows[1]["lost"], "0");
}

TEST(PaperExperiments, PredictedEarlyRejectionRejectsFewerAndWastesLessPrefill) {
  if (!fs::exists(kTrace)) GTEST_SKIP() << kTrace << " is absent";
  auto rows = Sweep({"--config", kRoot + "/configs/paper/early_rejection.ini", "--sweep",
                     "conductor.early_rejection=off,predicted"},
                    "early");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_LT(std::stoi(rows[1]["rejected"]), std::stoi(rows[0]["rejected"]));
  EXPECT_EQ(std::stoi(rows[0]["completed"]) + std::stoi(rows[0]["rejected"]), 12031);
}

}  // namespace
}  // namespace mooncake::eval

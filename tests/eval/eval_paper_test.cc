// The paper's experiments through `mooncake eval` and the shipped configs, on the real
// conversation trace (../shared/traces; skipped when absent): the orders the paper reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../support/scratch_dir.h"
#include "engine/cost_model.h"
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

// Reads requests.csv of a single run into rows of column -> value.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
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

// Issue 16: no completed request's TTFT below the prefill of one token, which reads every
// weight from HBM: at least 141.2 GB / (8 x 2039 GB/s) = 8.66 ms for LLaMA3-70B on 8 x A800,
// and the roofline's one-token pass (at mbu 0.8) 10.82 ms. Before the roofline, fully cached
// prompts came out at 0.1 ms.
TEST(PaperExperiments, NoTtftBelowTheOneTokenPrefillFloor) {
  if (!fs::exists(kTrace)) GTEST_SKIP() << kTrace << " is absent";
  auto model = engine::LoadModelPreset(kRoot + "/configs/models", "llama3-70b");
  auto hw = engine::LoadHardwarePreset(kRoot + "/configs/hardware", "a800x8");
  ASSERT_TRUE(model.ok() && hw.ok());
  const engine::CostModel cost(*model, *hw);
  const double weights_over_hbm = static_cast<double>(cost.WeightBytes()) / hw->hbm_bytes_per_s;
  EXPECT_GT(weights_over_hbm, 0.0086);
  const double one_token = engine::NanosToSeconds(cost.PrefillTime(1, 0));
  for (const char* config : {"mooncake", "vllm_prefix", "vllm_chunked"}) {
    const std::string out = test_support::BinaryScratchDir() / (std::string("floor_") + config);
    std::vector<std::string> args = {
        "eval",    "--config",     kRoot + "/configs/eval/" + config + ".ini",
        "--trace", kTrace,         "--out",
        out,       "--plots=false"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ASSERT_EQ(RunEvalCommand(static_cast<int>(argv.size()), argv.data()), 0) << config;
    const auto rows = ReadCsv(out + "/requests.csv");
    ASSERT_EQ(rows.size(), 12031u) << config;
    double min_ttft = 1e9;
    size_t completed = 0;
    for (const auto& r : rows) {
      if (r.at("outcome") != "completed") continue;
      ++completed;
      min_ttft = std::min(min_ttft, std::stod(r.at("ttft_s")));
    }
    EXPECT_GT(completed, 11000u) << config;
    EXPECT_GE(min_ttft, weights_over_hbm) << config;
    EXPECT_GE(min_ttft, one_token - 1e-9) << config;
  }
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

// `mooncake eval` end to end on small synthetic workloads: outputs, exit codes, sweeps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/scratch_dir.h"
#include "eval/eval_command.h"

namespace mooncake::eval {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  const std::string p = test_support::BinaryScratchDir() / name;
  fs::remove_all(p);
  return p;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int RunEval(std::vector<std::string> args, const SweepComm& comm = SerialSweepComm()) {
  args.insert(args.begin(), "eval");
  args.push_back("--plots=false");
  args.push_back("--synthetic.requests=120");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return RunEvalCommand(static_cast<int>(argv.size()), argv.data(), comm);
}

TEST(EvalCommand, SingleRunWritesRequestsCsvAndSummaryJson) {
  const std::string out = TempDir("single");
  ASSERT_EQ(RunEval({"--out", out, "--cluster.prefill=2", "--cluster.decode=2"}), 0);
  auto j = nlohmann::json::parse(Slurp(out + "/summary.json"));
  EXPECT_EQ(j["requests"]["total"], 120);
  EXPECT_EQ(j["requests"]["lost"], 0);
  EXPECT_EQ(j["requests"]["completed"].get<int>() + j["requests"]["rejected"].get<int>(), 120);
  const std::string csv = Slurp(out + "/requests.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 121);
}

TEST(EvalCommand, SameSeedGivesIdenticalRequestsCsv) {
  const std::string a = TempDir("det_a"), b = TempDir("det_b");
  ASSERT_EQ(RunEval({"--out", a, "--conductor.policy=random"}), 0);
  ASSERT_EQ(RunEval({"--out", b, "--conductor.policy=random"}), 0);
  const std::string first = Slurp(a + "/requests.csv");
  ASSERT_GT(first.size(), 1000u) << "no requests.csv written";  // two missing files are equal too
  EXPECT_EQ(first, Slurp(b + "/requests.csv"));
}

TEST(EvalCommand, BadOptionExitsTwoNamingIt) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunEval({"--slo.tbt=fast"}), 2);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("slo.tbt"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunEval({"--sweep", "nosuch.key=1,2"}), 2);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("nosuch.key"), std::string::npos) << err;
}

TEST(EvalCommand, MalformedTraceLineFailsWithFileAndLineOrIsSkipped) {
  const std::string dir = TempDir("badtrace");
  fs::create_directories(dir);
  const std::string trace = dir + "/t.jsonl";
  {
    std::ofstream f(trace);
    for (int i = 1; i <= 20; ++i) {
      if (i == 17) {
        f << "{\"timestamp\": 17, \"input_length\": 600}\n";
      } else {
        f << "{\"timestamp\": " << i * 100 << ", \"input_length\": 600, \"output_length\": 3, "
          << "\"hash_ids\": [" << i << ", " << 1000 + i << "]}\n";
      }
    }
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunEval({"--trace", trace, "--out", dir + "/run"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("t.jsonl:17: "), std::string::npos) << err;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunEval({"--trace", trace, "--trace.skip_invalid", "--out", dir + "/run2"}), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("skipped 1 invalid line"), std::string::npos) << out;
  auto j = nlohmann::json::parse(Slurp(dir + "/run2/summary.json"));
  EXPECT_EQ(j["requests"]["total"], 19);
}

// An empty selection (an empty trace, or --trace.offset past its end) is a usage error naming
// the file and how many requests it holds, not a run of nothing with an all-zero table.
TEST(EvalCommand, EmptyTraceSelectionIsAUsageError) {
  const std::string dir = TempDir("emptytrace");
  fs::create_directories(dir);
  const std::string empty = dir + "/empty.jsonl";
  std::ofstream(empty).close();
  const std::string three = dir + "/three.jsonl";
  {
    std::ofstream f(three);
    for (int i = 1; i <= 3; ++i) {
      f << "{\"timestamp\": " << i * 100 << ", \"input_length\": 600, \"output_length\": 3, "
        << "\"hash_ids\": [" << i << ", " << 1000 + i << "]}\n";
    }
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunEval({"--trace", empty, "--out", dir + "/run"}), 2);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(empty), std::string::npos) << err;
  EXPECT_NE(err.find("holds no requests"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir + "/run/summary.json"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunEval({"--trace", three, "--trace.offset", "5", "--out", dir + "/run2"}), 2);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("trace.offset = 5"), std::string::npos) << err;
  EXPECT_NE(err.find("holds 3 requests"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir + "/run2/summary.json"));
}

TEST(EvalCommand, CommandLineOverridesTheConfigFile) {
  const std::string dir = TempDir("ini");
  fs::create_directories(dir);
  {
    std::ofstream f(dir + "/c.ini");
    f << "system = mooncake   # comment\n[cluster]\nprefill = 3\ndecode = 2\n"
      << "[conductor]\npolicy = random\n[slo]\ntbt = 150ms\n";
  }
  // From the file alone, random spreads requests over the 3 prefill instances.
  ASSERT_EQ(RunEval({"--config", dir + "/c.ini", "--out", dir + "/a"}), 0);
  EXPECT_NE(Slurp(dir + "/a/requests.csv").find(",completed,,2,"), std::string::npos);
  // The command line wins: one prefill instance.
  ASSERT_EQ(RunEval({"--config", dir + "/c.ini", "--cluster.prefill=1", "--out", dir + "/b"}), 0);
  const std::string csv = Slurp(dir + "/b/requests.csv");
  EXPECT_EQ(csv.find(",completed,,1,"), std::string::npos);
  EXPECT_EQ(csv.find(",completed,,2,"), std::string::npos);
  ::testing::internal::CaptureStderr();
  {
    std::ofstream f(dir + "/bad.ini");
    f << "[cluster]\nprefill = many\n";
  }
  EXPECT_EQ(RunEval({"--config", dir + "/bad.ini"}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cluster.prefill"), std::string::npos) << err;
}

TEST(EvalCommand, SweepWritesOneRowPerPoint) {
  const std::string out = TempDir("sweep");
  ASSERT_EQ(RunEval({"--out", out, "--sweep", "conductor.policy=random,kvcache_centric", "--sweep",
                     "load.scale=1,2"}),
            0);
  const std::string csv = Slurp(out + "/sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_EQ(csv.rfind("point,conductor.policy,load.scale,system", 0), 0u) << csv;
  EXPECT_TRUE(fs::exists(out + "/points/003/summary.json"));
}

// Without --sweep under mpirun, one rank runs: the others would write the same files at once.
TEST(EvalCommand, SingleRunOnTwoRanksRunsOnRankZeroOnly) {
  const std::string out = TempDir("single_on_two");
  SweepComm r1{1, 2, [](const std::string&) { return std::vector<std::string>{}; }};
  ASSERT_EQ(RunEval({"--out", out}, r1), 0);
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  SweepComm r0{0, 2, [](const std::string& rows) { return std::vector<std::string>{rows}; }};
  ASSERT_EQ(RunEval({"--out", out}, r0), 0);
  EXPECT_TRUE(fs::exists(out + "/summary.json"));
}

TEST(EvalCommand, SweepSplitOverTwoRanksGathersTheSameCsv) {
  const std::vector<std::string> sweep = {"--sweep",
                                          "conductor.policy=random,load_balance,cache_aware"};
  const std::string serial = TempDir("serial"), split = TempDir("split");
  auto args = sweep;
  args.insert(args.end(), {"--out", serial});
  ASSERT_EQ(RunEval(args), 0);
  // Rank 1 runs first and hands its rows to rank 0's gather, as MPI would.
  std::string rank1_rows;
  SweepComm r1{1, 2, [&](const std::string& rows) {
                 rank1_rows = rows;
                 return std::vector<std::string>{};
               }};
  args = sweep;
  args.insert(args.end(), {"--out", split});
  ASSERT_EQ(RunEval(args, r1), 0);
  EXPECT_FALSE(fs::exists(split + "/sweep.csv"));
  SweepComm r0{0, 2, [&](const std::string& rows) {
                 return std::vector<std::string>{rows, rank1_rows};
               }};
  ASSERT_EQ(RunEval(args, r0), 0);
  // Identical but for the wall-time column.
  auto strip = [](std::string csv) {
    std::string out;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) out += line.substr(0, line.rfind(',')) + "\n";
    return out;
  };
  EXPECT_EQ(strip(Slurp(serial + "/sweep.csv")), strip(Slurp(split + "/sweep.csv")));
}

}  // namespace
}  // namespace mooncake::eval

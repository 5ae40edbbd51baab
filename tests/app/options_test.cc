#include "app/options.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include "../support/scratch_dir.h"

namespace mooncake::app {
namespace {

ParseOutcome Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mooncake");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseJobOptions(static_cast<int>(argv.size()), argv.data());
}

std::string WriteIni(const std::string& text) {
  std::string path = test_support::BinaryScratchDir().path() + "/opts_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".ini";
  std::ofstream(path) << text;
  return path;
}

TEST(OptionsTest, DefaultsAreValid) {
  auto p = Parse({});
  ASSERT_TRUE(p.options.has_value());
  EXPECT_EQ(p.options->store.dram, 64ull << 20);
  EXPECT_EQ(p.options->transport.ucx.rma_slice,
            1u << 20);  // chosen by measurement (docs/TRANSFER.md)
}

// The store service keeps what it acknowledged; the serving job's KV cache evicts.
TEST(OptionsTest, WhenFullDefaultsToKeepForTheStoreServiceAndEvictForServing) {
  auto store = Parse({"--job.mode", "store"});
  ASSERT_TRUE(store.options.has_value());
  EXPECT_TRUE(store.options->store.keep_when_full);
  EXPECT_EQ(store.options->store.spill_queue, 16ull << 20);  // store.dram / 4
  auto serve = Parse({"--store.spill_queue", "2MiB"});
  ASSERT_TRUE(serve.options.has_value());
  EXPECT_FALSE(serve.options->store.keep_when_full);
  EXPECT_EQ(serve.options->store.spill_queue, 2ull << 20);
  auto evict = Parse({"--job.mode", "store", "--store.when_full", "evict"});
  ASSERT_TRUE(evict.options.has_value());
  EXPECT_FALSE(evict.options->store.keep_when_full);
}

TEST(OptionsTest, UnitsParseOnTheCommandLine) {
  auto p = Parse({"--store.dram", "2GiB", "--job.rpc_timeout", "100ms", "--transport.tls", "tcp"});
  ASSERT_TRUE(p.options.has_value());
  EXPECT_EQ(p.options->store.dram, 2ull << 30);
  EXPECT_EQ(p.options->rpc_timeout, std::chrono::milliseconds(100));
  EXPECT_EQ(p.options->transport.ucx.tls, "tcp");
}

TEST(OptionsTest, CommandLineOverridesTheConfigFile) {
  std::string ini = WriteIni("store.dram = 128MiB\n[job]\nping_rounds = 7\nblock_size = 4KiB\n");
  auto p = Parse({"--config", ini, "--store.dram", "256MiB"});
  ASSERT_TRUE(p.options.has_value());
  EXPECT_EQ(p.options->store.dram, 256ull << 20);
  EXPECT_EQ(p.options->ping_rounds, 7);
  EXPECT_EQ(p.options->block_size, 4096u);
}

// Each bad value exits 2 with one line that names the option it is about.
TEST(OptionsTest, BadValuesExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--store.dram", "2XB"}, "store.dram"},
      {{"--store.dram", "1KiB"}, "store.dram"},           // below the range
      {{"--job.rpc_timeout", "100"}, "job.rpc_timeout"},  // no unit
      {{"--transport.data_path", "carrier-pigeon"}, "transport.data_path"},
      {{"--job.ping_rounds", "0"}, "job.ping_rounds"},
      {{"--no-such-option"}, "no-such-option"},
      {{"--config", "/nonexistent/x.ini"}, "/nonexistent/x.ini"},
      {{"--job.plots", "maybe"}, "job.plots"},
      {{"--store.when_full", "drop"}, "store.when_full"},
      {{"--store.spill_queue", "128MiB"}, "store.spill_queue"},  // above store.dram
      {{"--store.metrics_port", "70000"}, "store.metrics_port"},
      {{"--store.metrics_port", "on"}, "store.metrics_port"}};
  for (const auto& [args, option] : cases) {
    testing::internal::CaptureStderr();
    const ParseOutcome out = Parse(args);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(out.exit_code, 2) << args[0];
    EXPECT_FALSE(out.options.has_value()) << args[0];
    EXPECT_NE(err.find(option), std::string::npos) << args[0] << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// A config file given without --config was once ignored in silence (the default ran instead).
TEST(OptionsTest, BareArgumentExitsTwoSuggestingConfig) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"configs/serve/small.ini"}).exit_code, 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--config configs/serve/small.ini"), std::string::npos) << err;
  EXPECT_EQ(Parse({"--trace-limit", "10", "stray"}).exit_code, 2);
}

// --store.recover given a run folder instead of its ssd/ recovered nothing without a word.
TEST(OptionsTest, RecoverFromARunFolderNamesItsSsdFolder) {
  const std::string run = test_support::BinaryScratchDir() / "recover_run";
  std::filesystem::create_directories(run + "/ssd/rank1");
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"--store.recover", run}).exit_code, 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("its SSD folder is '" + run + "/ssd'"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(run + "/rank1"));
  EXPECT_TRUE(Parse({"--store.recover", run + "/ssd"}).options.has_value());
}

TEST(OptionsTest, UnknownKeyInConfigFileExitsTwo) {
  std::string ini = WriteIni("store.dramm = 1GiB\n");
  EXPECT_EQ(Parse({"--config", ini}).exit_code, 2);
}

// A config file error names its line, as a compiler does (FILE:LINE:), whichever stage finds it:
// Boost's parser (a bad line, an unknown key, a value of the wrong type) or the conversion after
// it (a size without a known unit). A value the command line gave is not blamed on the file.
TEST(OptionsTest, ConfigFileErrorsNameTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"# comment\n[job\nping_rounds = 3\n", ":2: "},
      {"[job]\nping_rounds = 3\nbogus = 1\n", ":3: "},
      {"\n[store]\nreplicas = 1\n[job]\nping_rounds = many\n", ":5: "},
      {"[job]\nping_rounds = 3\n[store]\n  dram = 3XB\n", ":4)"}};
  for (const auto& [text, where] : cases) {
    const std::string ini = WriteIni(text);
    testing::internal::CaptureStderr();
    EXPECT_EQ(Parse({"--config", ini}).exit_code, 2) << text;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(ini + where), std::string::npos) << text << " -> " << err;
  }
  const std::string ini = WriteIni("[store]\ndram = 3XB\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"--config", ini, "--store.dram", "4XB"}).exit_code, 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find(ini + ":2"), std::string::npos) << err;
}

// Found by fuzz_job_options: Boost's error text substitutes "%name%" placeholders until none is
// left, so an unknown key, a bad line or a bad value that itself holds one (say
// "%original_token%") looped forever. Each must exit 2 promptly; alarm() turns a hang into a
// failure of the child instead of a hung test.
TEST(OptionsTest, PlaceholderTextExitsTwoInsteadOfHanging) {
  const std::vector<std::vector<std::string>> cases = {
      {"--config", WriteIni("%original_token%\n")},
      {"--config", WriteIni("x%canonical_option% = 1\n")},
      {"--config", WriteIni("job.ping_rounds = %value%\n")},
      {"--job.ping_rounds", "%value%"},
      {"--%canonical_option%", "1"},
  };
  for (const auto& args : cases) {
    EXPECT_EXIT(
        {
          alarm(5);
          std::exit(Parse(args).exit_code);
        },
        ::testing::ExitedWithCode(2), "")
        << args.back();
  }
}

TEST(OptionsTest, HelpAndVersionExitZero) {
  auto help = Parse({"--help"});
  EXPECT_FALSE(help.options.has_value());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(Parse({"--version"}).exit_code, 0);
}

}  // namespace
}  // namespace mooncake::app

// cli::AddOptionRows: each row shows in --help as the chained add_options() call it replaces
// (the help tests of every command compare that text) and stores its value in its target.
#include "common/cli/option_table.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/cli/command_line.h"
#include "common/cli/option_values.h"

namespace mooncake::cli {
namespace {

namespace po = boost::program_options;

struct Targets {
  std::string lease, file;
  int port = 0;
  bool dry_run = false;
};

po::options_description Table(Targets* t) {
  po::options_description d("Options");
  AddOptionRows(d, {{"help,h", Flag(), "print this help"},
                    {"store.lease", Text(&t->lease, "10s"), "lease of a get"},
                    {"store.file", Named(&t->file, "FILE"), "where to write"},
                    {"store.port", Number(&t->port, 7), "TCP port"},
                    {"dry-run", po::bool_switch(&t->dry_run), "print and exit"}});
  return d;
}

TEST(OptionTable, RowsShowTheirDefaultOrValueNameAsTheChainedCallDid) {
  Targets t;
  std::ostringstream help;
  help << Table(&t);
  const std::string text = help.str();
  EXPECT_NE(text.find("-h [ --help ] "), std::string::npos) << text;
  EXPECT_NE(text.find("--store.lease arg (=10s)"), std::string::npos) << text;
  EXPECT_NE(text.find("--store.file FILE "), std::string::npos) << text;
  EXPECT_NE(text.find("--store.port arg (=7)"), std::string::npos) << text;
  EXPECT_NE(text.find("--dry-run "), std::string::npos) << text;
}

TEST(OptionTable, RowsStoreIntoTheirTargetsAndKeepTheirDefaults) {
  Targets t;
  const po::options_description d = Table(&t);
  po::variables_map vm;
  po::store(ParseCommandLine({"--store.file", "out.json", "--dry-run"}, d), vm);
  po::notify(vm);
  EXPECT_EQ(t.lease, "10s");
  EXPECT_EQ(t.file, "out.json");
  EXPECT_EQ(t.port, 7);
  EXPECT_TRUE(t.dry_run);
  EXPECT_EQ(vm.count("help"), 0u);
}

// The shared rows: every command's --help, --config FILE and --log-level read the same, and
// --log-level's default and words are the ones ParseLogLevel accepts.
TEST(OptionTable, SharedRowsReadTheSameInEveryCommand) {
  std::string config, level;
  po::options_description d("Options");
  AddOptionRows(d,
                {HelpRow(), ConfigRow(&config, "INI file of these options"), LogLevelRow(&level)});
  std::ostringstream help;
  help << d;
  const std::string text = help.str();
  for (const char* shown : {"-h [ --help ] ", "print this help and exit", "--config FILE ",
                            "INI file of these options", "--log-level arg (=warn)"}) {
    EXPECT_NE(text.find(shown), std::string::npos) << shown << " missing from " << text;
  }
  po::variables_map vm;
  po::store(ParseCommandLine({"--config", "a.ini"}, d), vm);
  po::notify(vm);
  EXPECT_EQ(config, "a.ini");
  log::Level parsed = log::Level::kDebug;
  ASSERT_TRUE(ParseLogLevel(level, &parsed).ok()) << level;
  EXPECT_EQ(parsed, log::Level::kWarn);
  for (const char* word : {"debug", "info", "warn", "error"}) {
    EXPECT_NE(text.find(word), std::string::npos) << word << " missing from " << text;
    EXPECT_TRUE(ParseLogLevel(word, &parsed).ok()) << word;
  }
}

// The benchmarks' parser (cli::ParseBenchCommandLine): values stored, an abbreviation refused
// (not silently the longer option), --help printed only where asked and answered as NotFound.
TEST(BenchCommandLine, StoresValuesRefusesAbbreviationsAndAnswersHelp) {
  int batch = 0;
  po::options_description d("bench");
  d.add_options()("help,h", "this text")("batch-size", po::value(&batch)->default_value(8), "");
  auto parse = [&](std::vector<const char*> args, bool print_help, po::variables_map* vm) {
    args.insert(args.begin(), "bench");
    return ParseBenchCommandLine(static_cast<int>(args.size()), const_cast<char**>(args.data()), d,
                                 print_help, vm);
  };
  po::variables_map vm;
  ASSERT_TRUE(parse({"--batch-size", "32"}, false, &vm).ok());
  EXPECT_EQ(batch, 32);
  po::variables_map guessed;
  Status s = parse({"--batch", "4"}, false, &guessed);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("--batch"), std::string::npos) << s.message();
  po::variables_map help;
  testing::internal::CaptureStdout();
  EXPECT_EQ(parse({"--help"}, false, &help).code(), ErrorCode::kNotFound);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace mooncake::cli

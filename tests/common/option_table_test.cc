// cli::AddOptionRows: each row shows in --help as the chained add_options() call it replaces
// (the help tests of every command compare that text) and stores its value in its target.
#include "common/cli/option_table.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/cli/command_line.h"

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

}  // namespace
}  // namespace mooncake::cli

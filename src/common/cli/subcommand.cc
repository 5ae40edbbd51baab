#include "common/cli/subcommand.h"

#include <iostream>
#include <vector>

#include "common/cli/command_line.h"

namespace mooncake::cli {

namespace po = boost::program_options;

int SubcommandUsage(const char* name, const std::string& message) {
  std::cerr << "mooncake " << name << ": " << message << "\n";
  return 2;
}

int ParseSubcommand(const char* name, int argc, char** argv, const po::options_description& desc,
                    po::variables_map* vm) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    po::store(cli::ParseCommandLine(cli::CanonicalArgs(args), desc), *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return SubcommandUsage(name, e.what());
  }
  if (vm->count("help")) {
    std::cout << desc;
    return 0;
  }
  return -1;
}

}  // namespace mooncake::cli

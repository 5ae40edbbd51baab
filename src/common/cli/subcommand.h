// What the model subcommands (mooncake generate, mooncake calibrate) share: their argument
// parsing, --help and usage errors, each message prefixed with the subcommand's name.
#pragma once

#include <boost/program_options.hpp>
#include <string>

namespace mooncake::cli {

// Prints "mooncake NAME: MESSAGE" on stderr; returns 2, the usage-error exit code.
int SubcommandUsage(const char* name, const std::string& message);

// Parses argv[1..argc) against `desc` into `vm` (dashed or dotted spellings, as the main
// command). Returns 0 after printing --help, 2 after a usage error, -1 when the command goes on.
int ParseSubcommand(const char* name, int argc, char** argv,
                    const boost::program_options::options_description& desc,
                    boost::program_options::variables_map* vm);

}  // namespace mooncake::cli

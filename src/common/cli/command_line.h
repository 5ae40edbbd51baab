// The generic command-line and config-file parsing every command of `mooncake` shares (the job,
// eval, p2p, generate, calibrate): Boost.Program_options without abbreviations, bare arguments
// or "%placeholder%" loops, and the compatibility spellings.
#pragma once

#include <boost/program_options.hpp>
#include <istream>
#include <string>
#include <vector>

#include "common/status.h"

namespace mooncake::cli {

// Boost's default command-line style without allow_guessing: an abbreviation of an option
// (--job.mod for --job.mode) is an unknown option, not silently the longer one. Every parser
// of a command line in src/ and benchmarks/ uses it.
inline constexpr int kCommandLineStyle =
    boost::program_options::command_line_style::default_style &
    ~boost::program_options::command_line_style::allow_guessing;

// Parses a command line against `desc` (kCommandLineStyle), refusing a bare argument (a config
// file given without --config would otherwise be ignored in silence): throws po::error naming it.
boost::program_options::parsed_options ParseCommandLine(
    const std::vector<std::string>& args, const boost::program_options::options_description& desc);

// A benchmark's whole command line, argv[1..argc) against `desc` (kCommandLineStyle), stored and
// notified into `*vm`. Returns InvalidArgument with Boost's message for a bad one, NotFound for
// --help after printing `desc` on stdout (only when `print_help`: under mpirun one rank prints).
Status ParseBenchCommandLine(int argc, char** argv,
                             const boost::program_options::options_description& desc,
                             bool print_help, boost::program_options::variables_map* vm);

// Boost's error text replaces "%name%" placeholders until none is left, so an unknown key, a bad
// line or a bad value that itself holds one ("%original_token%") looped forever. Text holding
// "%word%" is refused first: throws po::error naming it. ParseCommandLine checks every argument.
void RefusePlaceholders(const std::string& text);

// po::parse_config_file after RefusePlaceholders on the whole text.
boost::program_options::parsed_options ParseConfigFile(
    std::istream& in, const boost::program_options::options_description& desc);

// Rewrites the spellings the issues and users type into the canonical keys: --trace-limit ->
// --trace.limit, --trace-offset, --trace-skip-invalid, --time-scale -> --time_scale, --kv-scale
// -> --kv_scale. Only for compatibility: --help, the docs and the scripts use the canonical keys
// (tools/check_docs.py keeps the old spellings out of README.md and docs/).
std::vector<std::string> CanonicalArgs(const std::vector<std::string>& args);

}  // namespace mooncake::cli

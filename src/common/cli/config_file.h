#pragma once

// Config files (--config FILE) as Boost.Program_options reads them, with errors that name the
// line: Boost's own messages name the option or the text it could not read, never where it is.

#include <boost/program_options.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake::cli {

// Reads the config file at `path` into `vm` (ParseConfigFile: placeholders refused first).
// Every error is a po::error whose text starts "PATH:LINE: " (the line that set the option, or
// the line Boost could not read), or "PATH: " when no line can be named; a file that cannot be
// opened is "config = 'PATH': cannot open the file".
void StoreConfigFile(const std::string& path,
                     const boost::program_options::options_description& desc,
                     boost::program_options::variables_map& vm);

// The 1-based line of `text` (a config file) that sets `option` ("section.key", or a key
// before any section), or 0 when none does. The first such line: Boost refuses a second one.
int ConfigLineOf(std::string_view text, std::string_view option);

// Where a conversion error came from, for options whose value is checked after Boost stored it
// (sizes, durations, ranges): when `message` starts with an option name ("store.dram = ...")
// that the command line `args` does not set and the config file `path` does, " (PATH:LINE)";
// otherwise "".
std::string ConfigFileWhere(const std::string& message, const std::vector<std::string>& args,
                            const std::string& path);

}  // namespace mooncake::cli

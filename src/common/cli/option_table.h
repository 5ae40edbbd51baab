// A command's options as a table, one row per option: its dotted key, what Boost stores the text
// in (and the default or the value name that --help shows) and its help line. The option files of
// every component (job, store, serve, engine, cluster, transport, p2p) declare their rows with it
// instead of chaining add_options() calls, so an option is one row wherever it is declared.
#pragma once

#include <boost/program_options.hpp>
#include <initializer_list>
#include <string>

namespace mooncake::cli {

struct OptionRow {
  const char* key;                                      // "store.lease", or "help,h"
  const boost::program_options::value_semantic* value;  // owned by Boost once added
  const char* help;
};

// Adds the rows to `d` in their order (the order --help prints).
void AddOptionRows(boost::program_options::options_description& d,
                   std::initializer_list<OptionRow> rows);

// Text with a default, shown as "--key arg (=default)".
boost::program_options::typed_value<std::string>* Text(std::string* target,
                                                       const char* default_value);

// Text without a default, shown as "--key NAME".
boost::program_options::typed_value<std::string>* Named(std::string* target,
                                                        const char* value_name);

// A number with a default, shown as "--key arg (=default)".
template <typename T>
boost::program_options::typed_value<T>* Number(T* target, T default_value) {
  return boost::program_options::value<T>(target)->default_value(default_value);
}

// An option without a value ("--help").
boost::program_options::value_semantic* Flag();

// Rows that mean the same in every command that has them, written once:
// "--help, -h" (print this help and exit);
OptionRow HelpRow();
// "--config FILE" (an INI file of the command's options; `help` says which and gives an example);
OptionRow ConfigRow(std::string* target, const char* help);
// "--log-level" (=warn), with the words ParseLogLevel (option_values.h) accepts.
OptionRow LogLevelRow(std::string* target);

}  // namespace mooncake::cli

#include "common/cli/option_table.h"

namespace mooncake::cli {

namespace po = boost::program_options;

void AddOptionRows(po::options_description& d, std::initializer_list<OptionRow> rows) {
  for (const OptionRow& row : rows) d.add_options()(row.key, row.value, row.help);
}

po::typed_value<std::string>* Text(std::string* target, const char* default_value) {
  return po::value<std::string>(target)->default_value(default_value);
}

po::typed_value<std::string>* Named(std::string* target, const char* value_name) {
  return po::value<std::string>(target)->value_name(value_name);
}

// What add_options()(key, help) stores for an option without a value.
po::value_semantic* Flag() { return new po::untyped_value(true); }

OptionRow HelpRow() { return {"help,h", Flag(), "print this help and exit"}; }

OptionRow ConfigRow(std::string* target, const char* help) {
  return {"config", Named(target, "FILE"), help};
}

OptionRow LogLevelRow(std::string* target) {
  return {"log-level", Text(target, "warn"), "debug | info | warn | error"};
}

}  // namespace mooncake::cli

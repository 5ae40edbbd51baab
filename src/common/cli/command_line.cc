#include "common/cli/command_line.h"

#include <cctype>
#include <iostream>
#include <sstream>

namespace mooncake::cli {

namespace po = boost::program_options;

void RefusePlaceholders(const std::string& text) {
  for (size_t open = text.find('%'); open != std::string::npos; open = text.find('%', open + 1)) {
    size_t end = open + 1;
    while (end < text.size() &&
           (std::islower(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
      ++end;
    }
    if (end > open + 1 && end < text.size() && text[end] == '%') {
      throw po::error("'" + text.substr(open, end + 1 - open) +
                      "' is not allowed in an option, a value or a config file");
    }
  }
}

po::parsed_options ParseConfigFile(std::istream& in, const po::options_description& desc) {
  std::ostringstream text;
  text << in.rdbuf();
  RefusePlaceholders(text.str());
  std::istringstream copy(text.str());
  return po::parse_config_file(copy, desc, /*allow_unregistered=*/false);
}

po::parsed_options ParseCommandLine(const std::vector<std::string>& args,
                                    const po::options_description& desc) {
  for (const std::string& a : args) RefusePlaceholders(a);
  po::parsed_options parsed =
      po::command_line_parser(args).options(desc).style(kCommandLineStyle).run();
  for (const auto& o : parsed.options) {
    if (o.position_key < 0) continue;
    const std::string bare = o.value.empty() ? "" : o.value.front();
    const bool looks_like_config = bare.size() > 4 && bare.substr(bare.size() - 4) == ".ini";
    throw po::error("unexpected argument '" + bare + "': options are given as --name value" +
                    (looks_like_config ? " (a config file: --config " + bare + ")" : ""));
  }
  return parsed;
}

Status ParseBenchCommandLine(int argc, char** argv, const po::options_description& desc,
                             bool print_help, po::variables_map* vm) {
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).style(kCommandLineStyle).run(),
              *vm);
    po::notify(*vm);
  } catch (const std::exception& e) {
    return InvalidArgument(e.what());
  }
  if (vm->count("help")) {
    if (print_help) std::cout << desc << "\n";
    return NotFound("help");
  }
  return Status::Ok();
}

std::vector<std::string> CanonicalArgs(const std::vector<std::string>& args) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"--trace-limit", "--trace.limit"},
      {"--trace-offset", "--trace.offset"},
      {"--trace-skip-invalid", "--trace.skip_invalid"},
      {"--time-scale", "--time_scale"},
      {"--kv-scale", "--kv_scale"},
  };
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::string r = a;
    for (auto [alias, key] : kAliases) {
      std::string al(alias);
      if (a == al) r = key;
      if (a.rfind(al + "=", 0) == 0) r = std::string(key) + a.substr(al.size());
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace mooncake::cli

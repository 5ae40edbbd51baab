#include "common/cli/config_file.h"

#include <fstream>
#include <sstream>

#include "common/cli/command_line.h"

namespace mooncake::cli {

namespace po = boost::program_options;

namespace {

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const size_t last = s.find_last_not_of(" \t\r");
  return s.substr(first, last + 1 - first);
}

// The text between the first "<before>'" and the next quote, or "".
std::string Quoted(const std::string& message, const std::string& before) {
  const size_t at = message.find(before + "'");
  if (at == std::string::npos) return "";
  const size_t open = at + before.size() + 1;
  const size_t close = message.find('\'', open);
  return close == std::string::npos ? "" : message.substr(open, close - open);
}

// The 1-based line whose text, without blanks around it, is `wanted`; 0 when none is.
int LineHolding(std::string_view text, std::string_view wanted) {
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    if (Trim(text.substr(start, end - start)) == wanted) return number;
    start = end + 1;
  }
  return 0;
}

// The line a Boost error is about: the unreadable line, or the line setting the named option.
int LineOfError(const std::string& text, const po::error& e) {
  const std::string message = e.what();
  if (dynamic_cast<const po::invalid_config_file_syntax*>(&e) != nullptr) {
    const std::string line = Quoted(message, "line ");
    return line.empty() ? 0 : LineHolding(text, Trim(line));
  }
  std::string option;
  if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&e)) {
    option = named->get_option_name();
  }
  if (option.empty()) option = Quoted(message, "option ");
  while (!option.empty() && option.front() == '-') option.erase(0, 1);
  return option.empty() ? 0 : ConfigLineOf(text, option);
}

}  // namespace

int ConfigLineOf(std::string_view text, std::string_view option) {
  std::string section;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(Trim(line.substr(1, line.size() - 2)));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key(Trim(line.substr(0, eq)));
    if ((section.empty() ? key : section + "." + key) == option) return number;
  }
  return 0;
}

void StoreConfigFile(const std::string& path, const po::options_description& desc,
                     po::variables_map& vm) {
  std::ifstream in(path);
  if (!in) throw po::error("config = '" + path + "': cannot open the file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    std::istringstream copy(text);
    po::store(ParseConfigFile(copy, desc), vm);
  } catch (const po::error& e) {
    const int line = LineOfError(text, e);
    throw po::error(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                    e.what());
  }
}

std::string ConfigFileWhere(const std::string& message, const std::vector<std::string>& args,
                            const std::string& path) {
  if (path.empty()) return "";
  const size_t space = message.find(' ');
  const std::string option = message.substr(0, space);
  if (option.empty() || option.find('.') == std::string::npos) return "";
  for (const std::string& a : args) {
    if (a == "--" + option || a.rfind("--" + option + "=", 0) == 0) return "";
  }
  std::ifstream in(path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const int line = ConfigLineOf(buffer.str(), option);
  return line > 0 ? " (" + path + ":" + std::to_string(line) + ")" : "";
}

}  // namespace mooncake::cli

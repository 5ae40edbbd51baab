#include "engine/ini.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mooncake::engine {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Result<IniValues> ParseIni(std::string_view text, std::string_view source) {
  IniValues out;
  std::string section;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    const size_t hash = line.find_first_of("#;");
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') {
        return InvalidArgument(fmt::format("{}:{}: section header lacks ']'", source, line_no));
      }
      section = std::string(Trim(line.substr(1, line.size() - 2)));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument(fmt::format("{}:{}: expected key = value", source, line_no));
    }
    std::string key(Trim(line.substr(0, eq)));
    if (!section.empty()) key = section + "." + key;
    out[key] = std::string(Trim(line.substr(eq + 1)));
  }
  return out;
}

Result<IniValues> ReadIniFile(const std::string& path) {
  std::ifstream in(path);
  if (!in.is_open()) return NotFound(fmt::format("{}: cannot open", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseIni(ss.str(), path);
}

Result<double> IniNumber(const IniValues& v, const std::string& key, std::string_view source) {
  auto it = v.find(key);
  if (it == v.end()) return InvalidArgument(fmt::format("{}: {}: missing", source, key));
  char* end = nullptr;
  const double d = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0') {
    return InvalidArgument(fmt::format("{}: {}: '{}' is not a number", source, key, it->second));
  }
  return d;
}

}  // namespace mooncake::engine

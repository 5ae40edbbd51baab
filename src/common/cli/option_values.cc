#include "common/cli/option_values.h"

#include <cstdlib>
#include <utility>

#include "common/units.h"

namespace mooncake::cli {

Status SizeOption(const char* name, const std::string& value, uint64_t lo, uint64_t hi,
                  uint64_t* out) {
  auto bytes = ParseBytes(value);
  if (!bytes.ok()) {
    return InvalidArgument(std::string(name) + " = '" + value + "': " + bytes.status().message());
  }
  if (*bytes < lo || *bytes > hi) {
    return OutOfRange(std::string(name) + " = '" + value + "' is out of range (allowed " +
                      FormatBytes(lo) + " to " + FormatBytes(hi) + ")");
  }
  *out = *bytes;
  return Status::Ok();
}

Status DurationOption(const char* name, const std::string& value, Nanos lo, Nanos hi, Nanos* out) {
  auto d = ParseDuration(value);
  if (!d.ok()) {
    return InvalidArgument(std::string(name) + " = '" + value + "': " + d.status().message());
  }
  if (*d < lo || *d > hi) {
    return OutOfRange(std::string(name) + " = '" + value + "' is out of range (allowed " +
                      FormatDuration(lo) + " to " + FormatDuration(hi) + ")");
  }
  *out = *d;
  return Status::Ok();
}

Status PortOption(const char* name, const std::string& value, int* out) {
  if (value == "off") {
    *out = -1;
    return Status::Ok();
  }
  char* end = nullptr;
  const long port = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || port < 0 || port > 65535) {
    return InvalidArgument(std::string(name) + " = '" + value +
                           "' (allowed: off, or a port 0 to 65535)");
  }
  *out = static_cast<int>(port);
  return Status::Ok();
}

Status OnOffOption(const char* name, const std::string& value, bool* out) {
  if (value != "on" && value != "off") {
    return InvalidArgument(std::string(name) + " = '" + value + "' (allowed: on, off)");
  }
  *out = value == "on";
  return Status::Ok();
}

Status ParseLogLevel(const std::string& word, log::Level* level) {
  static const std::pair<const char*, log::Level> kLevels[] = {{"debug", log::Level::kDebug},
                                                               {"info", log::Level::kInfo},
                                                               {"warn", log::Level::kWarn},
                                                               {"error", log::Level::kError}};
  for (const auto& [name, value] : kLevels) {
    if (word == name) {
      *level = value;
      return Status::Ok();
    }
  }
  return InvalidArgument("log-level = '" + word + "' (allowed: debug, info, warn, error)");
}

}  // namespace mooncake::cli

#include "common/cli/option_values.h"

#include <cstdlib>
#include <utility>

#include "common/units.h"

namespace mooncake::cli {

namespace {

// `value` read by `parse` (ParseBytes, ParseDuration), within [lo, hi] (written by `format`).
template <typename T, typename Parse, typename Format>
Status RangeOption(const char* name, const std::string& value, T lo, T hi, T* out, Parse parse,
                   Format format) {
  Result<T> parsed = parse(value);
  if (!parsed.ok()) {
    return InvalidArgument(std::string(name) + " = '" + value + "': " + parsed.status().message());
  }
  if (*parsed < lo || *parsed > hi) {
    return OutOfRange(std::string(name) + " = '" + value + "' is out of range (allowed " +
                      format(lo) + " to " + format(hi) + ")");
  }
  *out = *parsed;
  return Status::Ok();
}

}  // namespace

Status SizeOption(const char* name, const std::string& value, uint64_t lo, uint64_t hi,
                  uint64_t* out) {
  return RangeOption(name, value, lo, hi, out, ParseBytes, FormatBytes);
}

Status DurationOption(const char* name, const std::string& value, Nanos lo, Nanos hi, Nanos* out) {
  return RangeOption(name, value, lo, hi, out, ParseDuration, FormatDuration);
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
  return ChoiceOption(name, value, {{"on", true}, {"off", false}}, out);
}

Status ParseLogLevel(const std::string& word, log::Level* level) {
  return ChoiceOption("log-level", word,
                      {{"debug", log::Level::kDebug},
                       {"info", log::Level::kInfo},
                       {"warn", log::Level::kWarn},
                       {"error", log::Level::kError}},
                      level);
}

}  // namespace mooncake::cli

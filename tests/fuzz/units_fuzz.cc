// Fuzzes the size and duration parsers (common/units.h), used by every option with a unit. The
// first byte picks the parser. A parsed value must be what the text says: its number times the
// unit's factor, rounded (checked against an independent computation), never wrapped, and the
// formatted value must parse back.
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/units.h"
#include "fuzz_check.h"

using namespace mooncake;

namespace {

// The text's number and unit as the documentation defines them (units.h).
bool Expected(std::string_view text, bool duration, double* value) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string digits(text.substr(0, i));
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  double number = std::strtod(digits.c_str(), nullptr);
  struct S {
    std::string_view name;
    double factor;
  };
  static constexpr S kSizes[] = {{"", 1},
                                 {"B", 1},
                                 {"KiB", 1024.0},
                                 {"MiB", 1048576.0},
                                 {"GiB", 1073741824.0},
                                 {"TiB", 1099511627776.0},
                                 {"KB", 1e3},
                                 {"MB", 1e6},
                                 {"GB", 1e9},
                                 {"TB", 1e12},
                                 {"K", 1024.0},
                                 {"M", 1048576.0},
                                 {"G", 1073741824.0}};
  static constexpr S kTimes[] = {{"ns", 1},  {"us", 1e3},   {"ms", 1e6},
                                 {"s", 1e9}, {"min", 60e9}, {"h", 3600e9}};
  for (const S& s : duration ? std::span<const S>(kTimes) : std::span<const S>(kSizes)) {
    if (unit == s.name) {
      *value = number * s.factor;
      return true;
    }
  }
  return false;
}

bool Near(double got, double want) { return std::fabs(got - want) <= 1.0 + want * 1e-12; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  double want = 0;
  if (data[0] % 2 == 0) {
    auto bytes = ParseBytes(text);
    if (!bytes.ok()) return 0;
    MC_FUZZ_CHECK(Expected(text, false, &want), "accepted an undocumented size unit");
    MC_FUZZ_CHECK(Near(static_cast<double>(*bytes), want), "size is not what the text says");
    auto back = ParseBytes(std::to_string(*bytes) + "B");
    MC_FUZZ_CHECK(back.ok() && *back == *bytes, "size round trip");
    (void)FormatBytes(*bytes);
  } else {
    auto d = ParseDuration(text);
    if (!d.ok()) return 0;
    MC_FUZZ_CHECK(Expected(text, true, &want), "accepted an undocumented time unit");
    MC_FUZZ_CHECK(d->count() >= 0, "duration wrapped negative");
    MC_FUZZ_CHECK(Near(static_cast<double>(d->count()), want),
                  "duration is not what the text says");
    auto back = ParseDuration(std::to_string(d->count()) + "ns");
    MC_FUZZ_CHECK(back.ok() && *back == *d, "duration round trip");
    (void)FormatDuration(*d);
  }
  return 0;
}

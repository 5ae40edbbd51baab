#include "common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mooncake {
namespace {

struct Suffix {
  std::string_view name;
  double factor;
};

// Splits "2.5GiB" into 2.5 and "GiB". Fails on empty, negative or non-numeric text.
Status SplitNumber(std::string_view text, double* number, std::string_view* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == 0) return InvalidArgument("'" + std::string(text) + "' does not start with a number");
  std::string digits(text.substr(0, i));
  char* end = nullptr;
  *number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) {
    return InvalidArgument("'" + std::string(text) + "' is not a number with a unit");
  }
  *unit = text.substr(i);
  while (!unit->empty() && unit->front() == ' ') unit->remove_prefix(1);
  return Status::Ok();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view text) {
  static constexpr Suffix kSuffixes[] = {{"", 1},
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
  text = Trim(text);
  double number = 0;
  std::string_view unit;
  MC_RETURN_IF_ERROR(SplitNumber(text, &number, &unit));
  for (const Suffix& s : kSuffixes) {
    if (unit == s.name) {
      // Rounded in double and range-checked before the cast: llround would overflow int64
      // past 2^63 (undefined; LLONG_MIN on x86), and the cast is undefined from 2^64 on.
      double bytes = std::round(number * s.factor);
      if (!(bytes < 18446744073709551616.0)) {
        return OutOfRange("'" + std::string(text) + "' is too large");
      }
      return static_cast<uint64_t>(bytes);
    }
  }
  return InvalidArgument("'" + std::string(text) +
                         "' has an unknown size unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
}

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  static constexpr Suffix kSuffixes[] = {{"ns", 1},  {"us", 1e3},   {"ms", 1e6},
                                         {"s", 1e9}, {"min", 60e9}, {"h", 3600e9}};
  text = Trim(text);
  double number = 0;
  std::string_view unit;
  MC_RETURN_IF_ERROR(SplitNumber(text, &number, &unit));
  if (unit.empty()) {
    return InvalidArgument("'" + std::string(text) + "' needs a time unit (ns, us, ms, s, min, h)");
  }
  for (const Suffix& s : kSuffixes) {
    if (unit == s.name) {
      // Range-checked before the cast, which is undefined past INT64_MAX (a huge duration
      // used to come back negative). 2^63 ns is about 292 years.
      double ns = std::round(number * s.factor);
      if (!(ns < 9223372036854775808.0)) {
        return OutOfRange("'" + std::string(text) + "' is too long (at most 292 years)");
      }
      return std::chrono::nanoseconds(static_cast<int64_t>(ns));
    }
  }
  return InvalidArgument("'" + std::string(text) +
                         "' has an unknown time unit (use ns, us, ms, s, min, h)");
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024.0 && i < 4) {
    v /= 1024.0;
    ++i;
  }
  char buf[64];
  if (i == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, kNames[i]);
  }
  return buf;
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  double ns = static_cast<double>(d.count());
  char buf[64];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  }
  return buf;
}

std::string FormatSeconds(std::chrono::nanoseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(d.count()) * 1e-9);
  return buf;
}

}  // namespace mooncake

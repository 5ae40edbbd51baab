#pragma once

// The Prometheus text exposition format (version 0.0.4), built at scrape time: a collector
// walks the job's counters and adds each sample here, then Text() is the /metrics body. Families
// keep the order they were first added in; each gets its # HELP and # TYPE once, however many
// label sets it has. Names follow Prometheus conventions (snake_case, a unit suffix such as
// _seconds or _bytes, counters ending in _total); a name or label that breaks the grammar is a
// programming error and is dropped with a warning rather than breaking every scrape.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mooncake::http {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  void Counter(std::string_view name, std::string_view help, double value,
               const Labels& labels = {});
  void Gauge(std::string_view name, std::string_view help, double value, const Labels& labels = {});
  // `upper_bounds` ascending (the +Inf bucket is added); `counts[i]` observations in bucket i
  // alone (not cumulative), one more entry than `upper_bounds` for the observations above them.
  void Histogram(std::string_view name, std::string_view help,
                 const std::vector<double>& upper_bounds, const std::vector<uint64_t>& counts,
                 double sum, const Labels& labels = {});

  std::string Text() const;
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // The grammar: [a-zA-Z_:][a-zA-Z0-9_:]* for metric names, [a-zA-Z_][a-zA-Z0-9_]* for labels.
  static bool ValidName(std::string_view name);
  static bool ValidLabel(std::string_view label);

 private:
  struct Family {
    std::string help;
    std::string type;
    std::vector<std::string> samples;  // formatted lines
  };
  Family* FamilyFor(std::string_view name, std::string_view help, const char* type,
                    const Labels& labels);

  std::vector<std::string> order_;
  std::map<std::string, Family, std::less<>> families_;
};

}  // namespace mooncake::http

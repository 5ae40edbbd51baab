#include "http/prometheus_text.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "common/log.h"

namespace mooncake::http {

namespace {

// Integers print as integers (counters read better), the rest round-trip exactly; the format
// spells the special values +Inf, -Inf and NaN.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);
}

// A label value escapes backslash, double quote and line feed; HELP text backslash and line feed.
std::string Escape(std::string_view s, bool quotes) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string LabelText(const Labels& labels, std::string_view extra_name = {},
                      std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ',';
    out += k + "=\"" + Escape(v, true) + "\"";
  }
  if (!extra_name.empty()) {
    if (out.size() > 1) out += ',';
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  return out + "}";
}

}  // namespace

bool PrometheusText::ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = std::isalpha(c) || c == '_' || c == ':' || (i > 0 && std::isdigit(c));
    if (!ok) return false;
  }
  return true;
}

bool PrometheusText::ValidLabel(std::string_view label) {
  if (label.empty() || label.substr(0, 2) == "__") return false;  // "__" is reserved
  for (size_t i = 0; i < label.size(); ++i) {
    const auto c = static_cast<unsigned char>(label[i]);
    if (!(std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c)))) return false;
  }
  return true;
}

PrometheusText::Family* PrometheusText::FamilyFor(std::string_view name, std::string_view help,
                                                  const char* type, const Labels& labels) {
  bool ok = ValidName(name);
  for (const auto& [k, v] : labels) ok = ok && ValidLabel(k);
  if (!ok) {
    log::Warn("metrics: '{}' (or one of its labels) is not a valid Prometheus name: dropped", name);
    return nullptr;
  }
  auto it = families_.find(name);
  if (it == families_.end()) {
    order_.emplace_back(name);
    it = families_.emplace(std::string(name), Family{std::string(help), type, {}}).first;
  } else if (it->second.type != type) {
    log::Warn("metrics: '{}' added as {} and as {}: the second dropped", name, it->second.type,
              type);
    return nullptr;
  }
  return &it->second;
}

void PrometheusText::Counter(std::string_view name, std::string_view help, double value,
                             const Labels& labels) {
  if (Family* f = FamilyFor(name, help, "counter", labels)) {
    f->samples.push_back(std::string(name) + LabelText(labels) + " " + FormatValue(value));
  }
}

void PrometheusText::Gauge(std::string_view name, std::string_view help, double value,
                           const Labels& labels) {
  if (Family* f = FamilyFor(name, help, "gauge", labels)) {
    f->samples.push_back(std::string(name) + LabelText(labels) + " " + FormatValue(value));
  }
}

void PrometheusText::Histogram(std::string_view name, std::string_view help,
                               const std::vector<double>& upper_bounds,
                               const std::vector<uint64_t>& counts, double sum,
                               const Labels& labels) {
  if (counts.size() != upper_bounds.size() + 1) {
    log::Warn("metrics: histogram '{}' has {} counts for {} bounds: dropped", name, counts.size(),
              upper_bounds.size());
    return;
  }
  Family* f = FamilyFor(name, help, "histogram", labels);
  if (f == nullptr) return;
  const std::string base(name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= upper_bounds.size(); ++i) {
    cumulative += counts[i];
    const std::string le = i < upper_bounds.size() ? FormatValue(upper_bounds[i]) : "+Inf";
    f->samples.push_back(base + "_bucket" + LabelText(labels, "le", le) + " " +
                         FormatValue(static_cast<double>(cumulative)));
  }
  f->samples.push_back(base + "_sum" + LabelText(labels) + " " + FormatValue(sum));
  f->samples.push_back(base + "_count" + LabelText(labels) + " " +
                       FormatValue(static_cast<double>(cumulative)));
}

std::string PrometheusText::Text() const {
  std::string out;
  for (const std::string& name : order_) {
    const Family& f = families_.find(name)->second;
    if (f.samples.empty()) continue;
    out += "# HELP " + name + " " + Escape(f.help, false) + "\n";
    out += "# TYPE " + name + " " + f.type + "\n";
    for (const std::string& s : f.samples) out += s + "\n";
  }
  return out;
}

}  // namespace mooncake::http

// The exposition format as Prometheus parses it: HELP and TYPE once per family, labels quoted and
// escaped, cumulative histogram buckets ending in +Inf, invalid names dropped (not emitted).
#include "http/prometheus_text.h"

#include <gtest/gtest.h>

namespace mooncake::http {
namespace {

TEST(PrometheusText, FamiliesGetHelpAndTypeOnceInTheOrderAdded) {
  PrometheusText t;
  t.Counter("mooncake_requests_total", "Requests by outcome.", 7, {{"outcome", "completed"}});
  t.Gauge("mooncake_objects", "Visible objects.", 3);
  t.Counter("mooncake_requests_total", "Requests by outcome.", 2, {{"outcome", "rejected"}});
  EXPECT_EQ(t.Text(),
            "# HELP mooncake_requests_total Requests by outcome.\n"
            "# TYPE mooncake_requests_total counter\n"
            "mooncake_requests_total{outcome=\"completed\"} 7\n"
            "mooncake_requests_total{outcome=\"rejected\"} 2\n"
            "# HELP mooncake_objects Visible objects.\n"
            "# TYPE mooncake_objects gauge\n"
            "mooncake_objects 3\n");
}

TEST(PrometheusText, ValuesAndLabelValuesAreWrittenAsTheFormatSays) {
  PrometheusText t;
  t.Gauge("g", "Help with a \\ and a\nnewline.", 0.25, {{"path", "a\"b\\c\nd"}});
  t.Gauge("g", "", 1.0 / 0.0);
  t.Gauge("g", "", 0.0 / 0.0, {{"x", "nan"}});
  t.Gauge("g", "", 1e20, {{"x", "big"}});
  const std::string text = t.Text();
  EXPECT_NE(text.find("# HELP g Help with a \\\\ and a\\nnewline.\n"), std::string::npos) << text;
  EXPECT_NE(text.find("g{path=\"a\\\"b\\\\c\\nd\"} 0.25\n"), std::string::npos) << text;
  EXPECT_NE(text.find("g +Inf\n"), std::string::npos) << text;
  EXPECT_NE(text.find("g{x=\"nan\"} NaN\n"), std::string::npos) << text;
  EXPECT_NE(text.find("g{x=\"big\"} 1e+20\n"), std::string::npos) << text;
}

TEST(PrometheusText, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  PrometheusText t;
  t.Histogram("ttft_seconds", "TTFT.", {0.1, 1}, {2, 3, 1}, 4.5, {{"clock", "model"}});
  EXPECT_EQ(t.Text(),
            "# HELP ttft_seconds TTFT.\n"
            "# TYPE ttft_seconds histogram\n"
            "ttft_seconds_bucket{clock=\"model\",le=\"0.1\"} 2\n"
            "ttft_seconds_bucket{clock=\"model\",le=\"1\"} 5\n"
            "ttft_seconds_bucket{clock=\"model\",le=\"+Inf\"} 6\n"
            "ttft_seconds_sum{clock=\"model\"} 4.5\n"
            "ttft_seconds_count{clock=\"model\"} 6\n");
}

TEST(PrometheusText, InvalidNamesLabelsAndMismatchesAreDropped) {
  PrometheusText t;
  t.Counter("9starts_with_digit", "", 1);
  t.Counter("has-dash", "", 1);
  t.Counter("ok_total", "", 1, {{"__reserved", "x"}});
  t.Counter("ok_total", "", 1, {{"bad-label", "x"}});
  t.Gauge("kind_clash", "", 1);
  t.Counter("kind_clash", "", 2);
  t.Histogram("h", "", {1, 2}, {1, 1}, 1);  // one count short
  EXPECT_EQ(t.Text(),
            "# HELP kind_clash \n"
            "# TYPE kind_clash gauge\n"
            "kind_clash 1\n");
  EXPECT_TRUE(PrometheusText::ValidName("mooncake:store_bytes"));
  EXPECT_FALSE(PrometheusText::ValidLabel("le-x"));
}

}  // namespace
}  // namespace mooncake::http

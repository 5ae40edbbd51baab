#include "trace/synthetic.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../support/scratch_dir.h"
#include "trace/trace_reader.h"

namespace mooncake::trace {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Synthetic, SameSeedGivesIdenticalJsonl) {
  SyntheticConfig c;
  c.num_requests = 200;
  test_support::ScratchDir dir("mc_syn");
  const std::string a = dir / "a.jsonl", b = dir / "b.jsonl";
  ASSERT_TRUE(WriteTraceJsonl(a, GenerateSynthetic(c)).ok());
  ASSERT_TRUE(WriteTraceJsonl(b, GenerateSynthetic(c)).ok());
  EXPECT_EQ(Slurp(a), Slurp(b));
  c.seed = 2;
  const std::string other = a + ".2";
  ASSERT_TRUE(WriteTraceJsonl(other, GenerateSynthetic(c)).ok());
  EXPECT_NE(Slurp(a), Slurp(other));
}

TEST(Synthetic, OutputPassesTheTraceValidator) {
  SyntheticConfig c;
  c.num_requests = 500;
  test_support::ScratchDir dir("mc_syn_v");
  const std::string path = dir / "v.jsonl";
  ASSERT_TRUE(WriteTraceJsonl(path, GenerateSynthetic(c)).ok());
  auto r = ReadTrace(path, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 500u);
}

TEST(Synthetic, RequestsSharePrefixesAndArriveAtTheRate) {
  SyntheticConfig c;
  c.num_requests = 2000;
  c.rate_per_s = 4;
  auto reqs = GenerateSynthetic(c);
  uint64_t refs = 0;
  std::set<uint64_t> unique;
  for (const auto& r : reqs) {
    for (auto h : r.hash_ids) unique.insert(h.value);
    refs += r.hash_ids.size();
  }
  const double reuse = 1.0 - static_cast<double>(unique.size()) / refs;
  EXPECT_GT(reuse, 0.3);
  const double span_s = reqs.back().timestamp_ms / 1000.0;
  EXPECT_NEAR(c.num_requests / span_s, c.rate_per_s, 0.4);
}

TEST(Synthetic, RejectsBadConfig) {
  SyntheticConfig c;
  c.rate_per_s = 0;
  EXPECT_FALSE(ValidateSyntheticConfig(c).ok());
}

}  // namespace
}  // namespace mooncake::trace

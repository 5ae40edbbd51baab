// Reproduces the single-LRU-pool hit rates of ../shared/traces/README.md within 1 point, using
// the conductor's own cache and index code (one shared pool of C blocks; a request hits the
// longest cached prefix of its blocks, then inserts all of them).
#include <gtest/gtest.h>

#include <filesystem>

#include "conductor/kv_index.h"
#include "trace/trace_reader.h"

namespace mooncake::conductor {
namespace {

double HitRate(const std::vector<trace::TraceRequest>& reqs, uint64_t capacity) {
  KvIndex idx(1, capacity, true);
  uint64_t hit = 0, total = 0;
  for (const auto& r : reqs) {
    hit += idx.LocalPrefix(0, r.hash_ids);
    total += r.hash_ids.size();
    idx.Store(0, r.hash_ids);
  }
  return 100.0 * static_cast<double>(hit) / static_cast<double>(total);
}

void CheckTrace(const char* file, const std::vector<double>& expected) {
  const std::string path = std::string(MOONCAKE_SHARED_TRACES) + "/" + file;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent; oracle not checked";
  auto reqs = trace::ReadTrace(path, {});
  ASSERT_TRUE(reqs.ok()) << reqs.status().ToString();
  const uint64_t caps[] = {1000, 5000, 10000, 20000, 50000};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(HitRate(*reqs, caps[i]), expected[i], 1.0) << file << " C=" << caps[i];
  }
}

TEST(OracleHitRate, ConversationTraceMatchesReadme) {
  CheckTrace("conversation_trace.jsonl", {4.4, 11.0, 21.1, 28.7, 35.5});
}

TEST(OracleHitRate, SyntheticTraceMatchesReadme) {
  CheckTrace("synthetic_trace.jsonl", {8.2, 27.9, 42.3, 57.1, 64.0});
}

}  // namespace
}  // namespace mooncake::conductor

// The table `mooncake p2p` prints on rank 0, its CSV twin, and the one-line verdict that
// scripts parse (benchmarks/p2p_vs_bcast.sh, the tests):
//   p2p result=OK receivers=5 ok=5 failed=0 dead=0 bytes=... seconds=... GBps=...
//       source_share=0.21 corrupt=0
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "p2p/messages.h"

namespace mooncake::p2p {

struct JobSummary {
  std::string object;
  uint64_t bytes = 0;
  uint32_t pieces = 0;
  uint64_t piece_size = 0;
  int world = 0;
  std::vector<std::string> hosts;  // per rank
  std::vector<RankReport> reports;
  std::vector<std::pair<int32_t, std::string>> dead;  // (rank, why)
  Nanos distribution{0};  // first registration to the last receiver's report
};

struct Verdict {
  int exit_code = 0;
  std::string result;  // OK, FAILED, RANK_LOST
  uint32_t receivers = 0, ok = 0, failed = 0, dead = 0;
  double source_share = 0;  // pieces read from sources / pieces read
  uint64_t corrupt = 0;
};

Verdict Judge(const JobSummary& job);
// The table and the verdict line, for stdout.
std::string FormatReport(const JobSummary& job, const Verdict& verdict);
// One row per rank: rank,host,role,ok,bytes,fetch_s,verify_s,GBps,from_source,from_peers,
// present,corrupt,read_failures,error.
Status WriteCsv(const std::string& path, const JobSummary& job);

}  // namespace mooncake::p2p

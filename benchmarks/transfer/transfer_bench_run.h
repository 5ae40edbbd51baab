// The measuring part of transfer_bench: one "case" (operation, request size, batch) run by an
// initiator rank against its target rank, verified before and after the timed loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::bench {

struct CaseSpec {
  std::string label;  // "64KiB" or "llama3-70b kv block (160 x 1 MiB)"
  transport::OpKind op = transport::OpKind::kRead;
  size_t block_size = 0;  // bytes per request
  size_t batch_size = 1;  // requests per batch
  size_t depth = 1;       // batches in flight per thread
  int threads = 1;
  Nanos duration = Nanos(2'000'000'000);
  Nanos warmup = Nanos(200'000'000);
  Nanos timeout = Nanos(30'000'000'000);  // per batch wait
};

// Where the requests go: [local, local + footprint) and [remote, remote + footprint) are
// registered; request k of a thread uses slot (thread_offset + k) % slots, slot = block_size.
struct Target {
  transport::Transport* transport = nullptr;
  Rank peer;
  std::byte* local = nullptr;
  uint64_t remote = 0;
  size_t footprint = 0;
  uint64_t remote_seed = 0;  // the target filled its buffer with FillPattern(remote_seed, 0, ..)
};

struct CaseResult {
  std::string label, op;
  size_t block_size = 0, batch_size = 0, depth = 0;
  int threads = 0;
  uint64_t requests = 0, bytes = 0;
  double seconds = 0;
  double gbps = 0, requests_per_s = 0;         // GB/s = 1e9 bytes/s
  double p50_us = 0, p99_us = 0, p999_us = 0;  // batch latency, submit to completion
  std::string verified;                        // "yes" or what failed
};

// Verifies one read and one write of `block_size` at the first and last slot (outside timing),
// then runs the timed loop, then checks the remote bytes again. Errors stop the case.
Result<CaseResult> RunCase(const CaseSpec& spec, const Target& target);

}  // namespace mooncake::bench

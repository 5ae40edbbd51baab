// The settings the serving roles read, in one plain struct: the live job (src/app) fills it
// from its options, tests fill it by hand. Times are wall time unless named *_model.
#pragma once

#include <cstdint>
#include <string>

#include "cluster/failure_detector.h"
#include "common/clock.h"
#include "trace/metrics.h"

namespace mooncake::serve {

// Failure detection (cluster/failure_detector.h), in wall time whatever the time scale.
using MembershipConfig = cluster::MembershipConfig;

struct ServeConfig {
  trace::Thresholds thresholds;  // TTFT SLO and the TBT thresholds reported
  int64_t chunk_tokens = 0;      // prefill chunk (0: the whole uncached part at once)
  double time_scale = 1.0;       // wall time = model time / time_scale
  int replicas = 1;              // store replicas of each new KV block
  // Bytes of KV staging a prefill rank holds at once (prefixes loaded ahead, the request being
  // computed, blocks waiting for the writer); the loader waits above it, so a prefill rank's
  // memory stays bounded however fast requests arrive. A single larger request runs alone.
  uint64_t prefill_staging = 256ull << 20;
  Nanos rpc_timeout = Nanos(2'000'000'000);       // one control-plane call
  Nanos phase_timeout = Nanos(60'000'000'000);    // a transfer, a store call, a stop
  Nanos job_deadline = Nanos(1'800'000'000'000);  // after it, open requests are lost
  Nanos progress_interval = Nanos(5'000'000'000);
  MembershipConfig membership;  // heartbeats and the failure timeout (wall time)
  // Decode ranks: the least time between two DecodeTokens reports (streamed requests' tokens),
  // so that their rate stays bounded however short a decode step is; each carries the tokens
  // of every streamed request in the batch since the last.
  Nanos stream_interval = std::chrono::milliseconds(5);
  // Conductor: the run folder, created before the replay: requests.csv grows in it as requests
  // finish, and a partial summary.json is written at every progress line. Empty: none.
  std::string run_dir;
  // Prefill ranks: write the KV of two blocks of one request to each other's place at the
  // decode rank (fault.swap_kv), so that a run shows it catches KV at the wrong position.
  bool fault_swap_kv = false;
  // Prefill ranks with an engine that computes (engine.kv_stream): each layer of a chunk's
  // finished blocks goes to the decode rank as soon as it is computed (true), or the chunk's
  // whole blocks once it is computed (false).
  bool kv_stream_layers = true;
  // Test hook (no option): with kv_stream_layers, the write of this layer is left out for the
  // first request that streams layers, which the decode rank's checksums must refuse. -1: off.
  int fault_skip_kv_layer = -1;
};

}  // namespace mooncake::serve

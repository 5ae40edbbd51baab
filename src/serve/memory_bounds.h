// What each role's peak resident set may reach, computed from the configured budgets and the
// workload, never fitted to a measurement (benchmarks/overload.sh holds the live job to it;
// docs/RELIABILITY.md states the formula):
//   every rank   F + W      F: fixed overhead (libraries, MPI and UCX state, thread stacks)
//                           W: the workload every rank loads (requests and their block hashes)
//   conductor    + requests x per-request state + prefill instances x blocks x index entry
//   store        + store.dram (registered and touched at start)
//   prefill      + max(prefill.staging, the largest request's KV)
//   decode       + decode.buffer
// A store rank with the SSD tier (store.ssd = on) also holds HDF5's chunk cache and its spill
// batches, which this bound does not count.
#pragma once

#include <cstdint>

#include "serve/serve_options.h"
#include "serve/workload.h"

namespace mooncake::serve {

// A rank with no buffer measured 31-37 MiB here (6 ranks, posix/cma); twice that, for heavier
// UCX transports (tcp, rdma) and allocator slack.
inline constexpr uint64_t kFixedRssOverhead = 96ull << 20;

struct RoleMemoryBounds {
  uint64_t conductor = 0, store = 0, prefill = 0, decode = 0;
  uint64_t workload = 0;  // W, part of each
};

// `store_dram`: store.dram of each store rank.
RoleMemoryBounds ComputeMemoryBounds(const ServeOptions& options, uint64_t store_dram,
                                     const Workload& workload, uint64_t kv_block_bytes,
                                     int prefill_instances);

}  // namespace mooncake::serve

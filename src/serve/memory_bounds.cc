#include "serve/memory_bounds.h"

#include <algorithm>
#include <unordered_set>

namespace mooncake::serve {
namespace {

// Heap blocks carry their size and alignment: count 16 B more per allocation.
constexpr uint64_t kMallocOverhead = 16;
// The conductor's state of one request: its record, pending decision and scheduling entry, and
// the requests.csv line (an upper estimate; each is a fixed-size struct of a few hundred bytes).
constexpr uint64_t kConductorPerRequest = 2048;
// One prefix-index entry (a hash-map node: key, value, next pointer, cached hash, bucket slot,
// heap overhead).
constexpr uint64_t kIndexEntry = 128;

}  // namespace

RoleMemoryBounds ComputeMemoryBounds(const ServeOptions& o, uint64_t store_dram,
                                     const Workload& workload, uint64_t kv_block_bytes,
                                     int prefill_instances) {
  RoleMemoryBounds b;
  std::unordered_set<uint64_t> distinct;
  uint64_t largest_request_blocks = 0;
  for (const auto& r : workload.requests) {
    b.workload += sizeof(r) + kMallocOverhead + r.hash_ids.size() * sizeof(r.hash_ids[0]);
    largest_request_blocks = std::max<uint64_t>(largest_request_blocks, r.hash_ids.size());
    for (auto h : r.hash_ids) distinct.insert(h.value);
  }
  const uint64_t base = kFixedRssOverhead + b.workload;
  b.conductor =
      base + workload.requests.size() * kConductorPerRequest +
      static_cast<uint64_t>(std::max(1, prefill_instances)) * distinct.size() * kIndexEntry;
  b.store = base + store_dram;
  b.prefill = base + std::max(o.prefill_staging, largest_request_blocks * kv_block_bytes);
  b.decode = base + o.decode_buffer;
  return b;
}

}  // namespace mooncake::serve

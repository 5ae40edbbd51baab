// Whether the store's DRAM segments fit the hosts they land on, checked at start (before any
// segment is allocated), and the progress of touching them (docs/STORE.md, "Memory").
//
// Every store rank allocates store.dram and faults all of it in at start; several store ranks
// on one host add up (launch/mooncake-mpirun --np 4 puts 3 store ranks on a single host). A
// job that does not fit was silent for a minute while it touched memory, then swapped or was
// killed; it now stops with exit 2 and one line that names the host, the sum and what it has.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::store {

// What this process may still take: MemAvailable of /proc/meminfo, or less when its memory
// cgroup (v2 memory.max, v1 memory.limit_in_bytes) leaves less. `*source` names the figure
// that was the smaller ("MemAvailable in /proc/meminfo", "the memory cgroup's limit").
uint64_t AvailableMemory(std::string* source);

// One rank's part in the check, as every rank tells the others.
struct RankMemory {
  std::string host;
  bool store = false;      // a store rank (holds store.dram)
  uint64_t available = 0;  // AvailableMemory() on its host, at start
  std::string source;      // what `available` is
  MC_WIRE_FIELDS(host, store, available, source)
};

// InvalidArgument naming the first host whose store ranks need more than it has available:
// "store.dram = 8.00 GiB x 3 store ranks on host vm = 24.00 GiB, but vm has 10.30 GiB
// available (MemAvailable in /proc/meminfo) ...". A host's figure is that of its lowest rank.
Status CheckStoreMemory(const std::vector<RankMemory>& ranks, uint64_t store_dram);

// The lowest store rank on `rank`'s host, or -1 when `rank` is not a store rank: that rank
// alone prints the host's touch progress.
int FirstStoreRankOnHost(const std::vector<RankMemory>& ranks, int rank);

// Writes zeros over [data, data + size) (faulting every page in now, not at the first put),
// calling `progress(done_bytes, elapsed)` every `interval` while it runs.
void TouchPages(std::byte* data, uint64_t size, std::chrono::nanoseconds interval,
                const std::function<void(uint64_t, std::chrono::nanoseconds)>& progress);

// Every rank's host, role (`store`: this rank is a store rank) and available memory, gathered
// over `bootstrap` within `timeout` before any store segment is allocated; index = rank (a record
// that does not decode is empty).
Result<std::vector<RankMemory>> GatherRankMemory(const cluster::Bootstrap& bootstrap, bool store,
                                                 Nanos timeout);

// Faults store rank `rank`'s segment in (TouchPages), the first store rank of each host saying
// how far it got every 5 s (8 GiB took about 50 s on a loaded 2-core machine, silent before).
void TouchSegment(std::byte* data, uint64_t size, const std::vector<RankMemory>& ranks, int rank);

}  // namespace mooncake::store

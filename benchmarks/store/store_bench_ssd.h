// The SSD tier of store_bench's store (--ssd-dir): every store rank opens an Hdf5Tier under
// DIR/rank<r> (emptied first and at the end) with its SsdStoreService and staging region, and
// the master gets a SpillCoordinator that never refuses a spill (its bound and the tier's queue
// are the store's DRAM) and a master that never promotes, so a block evicted to SSD stays
// SSD-only and every get of it is a remote SSD read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/hdf5/tier.h"
#include "store/ssd/ssd_coordinator.h"
#include "store/ssd/ssd_store_service.h"
#include "store_bench_setup.h"

namespace mooncake::bench {

struct SsdBenchOptions {
  std::string dir;                  // empty: no SSD tier
  uint64_t capacity = 16ull << 30;  // bucket files per store rank
  int reader_threads = 4;           // the staging's SSD reads in flight per store rank
  int local_threads = 0;  // ssd_local's reading threads per store rank (0: reader_threads)
  bool cold = false;      // drop the files' page cache before each SSD pass
};

// What a local read pass measured (store_bench turns it into a CSV row).
struct LocalReads {
  uint64_t calls = 0, bytes = 0, errors = 0;
  double seconds = 0;
  std::vector<float> lat_us;
  std::string first_error;
};

class SsdBench {
 public:
  // Not collective: call on every rank after StartStoreCluster, then barrier before any put.
  static Result<std::unique_ptr<SsdBench>> Start(const cluster::Bootstrap& mpi, StoreCluster& c,
                                                 const SsdBenchOptions& o);
  ~SsdBench();

  // Master: waits until every evicted block is on SSD.
  bool WaitSpills(Nanos timeout);
  // Master: how many of `keys` still have a DRAM replica (0: the case is SSD-only).
  size_t InDram(const std::vector<std::string>& keys);
  // Store rank: syncs its bucket files and drops their pages (posix_fadvise DONTNEED), then the
  // whole page cache when /proc/sys/vm/drop_caches may be written. Returns what it did.
  std::string DropCaches();
  // Store rank: the tier's own read (Hdf5Tier::Read, checksum verified) of those `keys` it
  // holds, each into its own `size`-byte slot of one buffer (the footprint a client's gets
  // have), on `threads` threads that each read their share of the keys in passes until
  // `min_time` (one pass when `one_pass`). As many threads as the stager's readers make it a
  // like-for-like baseline for the remote gets.
  LocalReads ReadLocally(const std::vector<std::string>& keys, size_t size, Nanos min_time,
                         bool one_pass, int threads);
  // Stops the coordinator (master) and the staging (store ranks): before StopStoreCluster.
  void Stop();

 private:
  SsdBench() = default;
  std::string dir_;
  std::unique_ptr<store::hdf5::Hdf5Tier> tier_;
  std::unique_ptr<store::SsdStoreService> service_;
  std::unique_ptr<store::SpillCoordinator> coordinator_;
  StoreCluster* cluster_ = nullptr;
};

}  // namespace mooncake::bench

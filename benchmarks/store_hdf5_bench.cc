// store_hdf5_bench: spill and promote bandwidth of the HDF5 SSD tier for one block size.
// Spill = SpillBorrowed() (the store rank's path: straight from its DRAM segment) of every block
// until the writer has written and indexed the last one (Drain); promote = Read() of every block
// into one buffer with its checksum verified. Prints one line:
//   hdf5_bench block=<B> blocks=<n> fsync=<0|1> write_MBps=<x> read_MBps=<y>
// Usage: store_hdf5_bench DIR BLOCK_BYTES TOTAL_BYTES [fsync]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/checksum.h"
#include "common/units.h"
#include "store/hdf5/tier.h"

using namespace mooncake;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DIR BLOCK_BYTES TOTAL_BYTES [fsync]\n", argv[0]);
    return 2;
  }
  auto block = ParseBytes(argv[2]);
  auto total = ParseBytes(argv[3]);
  if (!block.ok() || !total.ok() || *block == 0 || *total < *block) {
    std::fprintf(stderr, "bad sizes\n");
    return 2;
  }
  bool fsync = argc > 4 && std::string(argv[4]) == "fsync";
  uint64_t n = *total / *block;
  std::filesystem::remove_all(argv[1]);
  store::hdf5::Hdf5TierOptions o;
  o.dir = argv[1];
  o.bucket_bytes = std::max<uint64_t>(256ull << 20, *block);
  o.bucket_entries = static_cast<uint32_t>(o.bucket_bytes / *block + 1);
  o.capacity = (n * *block / o.bucket_bytes + 2) * o.bucket_bytes;
  o.queue_bytes = std::max<uint64_t>(64ull << 20, *block);
  o.fsync = fsync;
  o.cluster_id = "bench";
  auto tier = store::hdf5::Hdf5Tier::Open(o, nullptr);
  if (!tier.ok()) {
    std::fprintf(stderr, "%s\n", tier.status().ToString().c_str());
    return 1;
  }
  std::vector<std::byte> buf(*block);
  std::mt19937_64 rng(1);
  for (auto& b : buf) b = static_cast<std::byte>(rng());
  uint64_t sum = Checksum64(buf.data(), buf.size());
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    Status s = (*tier)->SpillBorrowed("blk-" + std::to_string(i), buf, sum, nullptr);
    if (!s.ok()) {
      std::fprintf(stderr, "spill: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  (*tier)->Drain();
  double write_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if ((*tier)->Stats().blocks != n) {
    std::fprintf(stderr, "only %lu of %lu blocks indexed\n",
                 static_cast<unsigned long>((*tier)->Stats().blocks),
                 static_cast<unsigned long>(n));
    return 1;
  }
  auto t1 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    auto r = (*tier)->Read("blk-" + std::to_string(i), buf);
    if (!r.ok()) {
      std::fprintf(stderr, "read: %s\n", r.status().ToString().c_str());
      return 1;
    }
  }
  double read_s = std::chrono::duration<double>(Clock::now() - t1).count();
  double mb = static_cast<double>(n * *block) / 1e6;
  std::printf("hdf5_bench block=%lu blocks=%lu fsync=%d write_MBps=%.1f read_MBps=%.1f\n",
              static_cast<unsigned long>(*block), static_cast<unsigned long>(n), fsync ? 1 : 0,
              mb / write_s, mb / read_s);
  tier->reset();
  std::filesystem::remove_all(argv[1]);
  return 0;
}

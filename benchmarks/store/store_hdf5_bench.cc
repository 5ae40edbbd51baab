// store_hdf5_bench: spill and promote bandwidth of the HDF5 SSD tier for one block size.
// Spill = SpillBorrowed() (the store rank's path: straight from its DRAM segment) of every block
// until the writer has written and indexed the last one (Drain); with `fsync` every group commit
// ends with an fdatasync, so the time covers the bytes reaching the disk. Promote = Read() of
// every block into one buffer with its checksum verified; with `cold` the bucket files' pages
// are first synced and dropped from the page cache (posix_fadvise DONTNEED, as fio's
// --invalidate=1 does), so the reads come from the disk; `dropall` then also writes 3 to
// /proc/sys/vm/drop_caches (root only; an error when refused). Prints one line:
//   hdf5_bench block=<B> blocks=<n> fsync=<0|1> cold=<0|1> commits=<n> blocks_per_commit=<x>
//     write_MBps=<x> read_MBps=<y>
// Usage: store_hdf5_bench DIR BLOCK_BYTES TOTAL_BYTES [fsync] [cold] [dropall] [commit=BYTES]
#include <fcntl.h>
#include <unistd.h>

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

namespace {

// Syncs every file under `dir` and drops its pages from the page cache. False when a file
// could not be opened or synced (the read would then not be cold).
bool DropFileCaches(const std::string& dir) {
  bool ok = true;
  for (const auto& de : std::filesystem::directory_iterator(dir)) {
    int fd = open(de.path().c_str(), O_RDONLY);
    if (fd < 0) {
      ok = false;
      continue;
    }
    ok = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 && ok;
    close(fd);
  }
  return ok;
}

// The whole page cache (what `echo 3 > /proc/sys/vm/drop_caches` does). Root only.
bool DropAllCaches() {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (fd < 0) return false;
  bool ok = write(fd, "3", 1) == 1;
  close(fd);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s DIR BLOCK_BYTES TOTAL_BYTES [fsync] [cold] [dropall] [commit=BYTES]\n",
                 argv[0]);
    return 2;
  }
  auto block = ParseBytes(argv[2]);
  auto total = ParseBytes(argv[3]);
  if (!block.ok() || !total.ok() || *block == 0 || *total < *block) {
    std::fprintf(stderr, "bad sizes\n");
    return 2;
  }
  bool fsync = false, cold = false, dropall = false;
  uint64_t commit_bytes = store::hdf5::Hdf5TierOptions{}.commit_bytes;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    auto commit = a.rfind("commit=", 0) == 0 ? ParseBytes(a.substr(7)) : Result<uint64_t>(0);
    if (a == "fsync") {
      fsync = true;
    } else if (a == "cold") {
      cold = true;
    } else if (a == "dropall") {
      dropall = true;
    } else if (commit.ok() && *commit > 0) {
      commit_bytes = *commit;
    } else {
      std::fprintf(stderr, "unknown argument '%s' (fsync, cold, dropall, commit=BYTES)\n",
                   a.c_str());
      return 2;
    }
  }
  uint64_t n = *total / *block;
  std::filesystem::remove_all(argv[1]);
  store::hdf5::Hdf5TierOptions o;
  o.dir = argv[1];
  o.bucket_bytes = std::max<uint64_t>(256ull << 20, *block);
  o.bucket_entries = static_cast<uint32_t>(o.bucket_bytes / *block + 1);
  o.capacity = (n * *block / o.bucket_bytes + 2) * o.bucket_bytes;
  o.queue_bytes = std::max<uint64_t>(64ull << 20, *block);
  o.fsync = fsync;
  o.commit_bytes = commit_bytes;
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
    Status s = (*tier)->SpillBorrowed("blk-" + std::to_string(i), 1, buf, sum, nullptr);
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
  const store::hdf5::TierStats written = (*tier)->Stats();
  if (cold && !DropFileCaches(argv[1])) {
    std::fprintf(stderr, "cannot drop the page cache of the files in %s\n", argv[1]);
    return 1;
  }
  if (dropall && !DropAllCaches()) {
    std::fprintf(stderr, "writing /proc/sys/vm/drop_caches was refused (root only)\n");
    return 1;
  }
  auto t1 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    auto r = (*tier)->Read("blk-" + std::to_string(i), 1, buf);
    if (!r.ok()) {
      std::fprintf(stderr, "read: %s\n", r.status().ToString().c_str());
      return 1;
    }
  }
  double read_s = std::chrono::duration<double>(Clock::now() - t1).count();
  double mb = static_cast<double>(n * *block) / 1e6;
  std::printf(
      "hdf5_bench block=%lu blocks=%lu fsync=%d cold=%d commits=%lu blocks_per_commit=%.1f "
      "write_MBps=%.1f read_MBps=%.1f\n",
      static_cast<unsigned long>(*block), static_cast<unsigned long>(n), fsync ? 1 : 0,
      cold ? 1 : 0, static_cast<unsigned long>(written.commits),
      static_cast<double>(n) / static_cast<double>(std::max<uint64_t>(written.commits, 1)),
      mb / write_s, mb / read_s);
  tier->reset();
  std::filesystem::remove_all(argv[1]);
  return 0;
}

// The MPI_Bcast baseline of benchmarks/p2p_vs_bcast.sh: rank 0 reads a file into memory, then
// every rank times one MPI_Bcast of its bytes (Open MPI picks the algorithm, or the script pins
// one with --mca coll_tuned_bcast_algorithm). The time is from a barrier to the moment the last
// rank holds the bytes (the maximum over ranks); each receiver then checks them against rank
// 0's XXH3-64 (not timed), so the baseline is known to deliver what p2p delivers.
//
//   mpirun -np N build/p2p_bcast_bench FILE         one timed broadcast of FILE's bytes
//   build/p2p_bcast_bench --make FILE SIZE_BYTES    writes SIZE_BYTES pseudo-random bytes
//
// Prints: "bcast bytes=B ranks=N seconds=S GBps=G verified=1". MPI is reached through
// cluster/mpi (MpiSession::Broadcast), as the project's layering asks.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cluster/mpi/mpi_session.h"
#include "common/checksum.h"
#include "common/wire.h"

namespace {

// xorshift64* bytes, written in 4 MiB blocks: a benchmark object in seconds, not minutes.
int MakeFile(const char* path, uint64_t size) {
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path);
    return 1;
  }
  std::vector<uint64_t> block(512 * 1024);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t done = 0; done < size;) {
    for (auto& w : block) {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      w = x * 0x2545f4914f6cdd1dull;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size - done, block.size() * 8));
    if (::write(fd, block.data(), n) != static_cast<ssize_t>(n)) {
      std::perror(path);
      ::close(fd);
      return 1;
    }
    done += n;
  }
  return ::close(fd) == 0 ? 0 : 1;
}

bool ReadFile(const char* path, char* into, uint64_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  for (uint64_t done = 0; done < size;) {
    const ssize_t n = ::pread(fd, into + done, size - done, static_cast<off_t>(done));
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return true;
}

// What each rank reports after the broadcast (gathered, not timed).
struct Outcome {
  double seconds = 0;
  uint64_t sum = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--make") == 0) {
    return MakeFile(argv[2], std::strtoull(argv[3], nullptr, 10));
  }
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: mpirun -np N p2p_bcast_bench FILE | p2p_bcast_bench --make FILE BYTES\n");
    return 2;
  }
  using mooncake::cluster::MpiSession;
  auto mpi_or = MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) {
    std::fprintf(stderr, "p2p_bcast_bench: %s\n", mpi_or.status().ToString().c_str());
    return 1;
  }
  const MpiSession& mpi = **mpi_or;
  const int rank = mpi.rank(), size = mpi.size();
  uint64_t bytes = 0;
  if (rank == 0) {
    FILE* f = std::fopen(argv[1], "rb");
    if (f != nullptr && std::fseek(f, 0, SEEK_END) == 0)
      bytes = static_cast<uint64_t>(std::ftell(f));
    if (f != nullptr) std::fclose(f);
  }
  if (!mpi.Broadcast(std::as_writable_bytes(std::span(&bytes, 1)), 0).ok()) mpi.Abort(1);
  char* buffer = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + 4096));
  if (buffer == nullptr || bytes == 0 || (rank == 0 && !ReadFile(argv[1], buffer, bytes))) {
    if (rank == 0) std::fprintf(stderr, "p2p_bcast_bench: cannot read %s\n", argv[1]);
    mpi.Abort(1);
  }
  // The receivers' pages are touched before the clock starts, as the P2P side's buffers are
  // (it registers them first): otherwise the broadcast pays their page faults and looks slower.
  if (rank != 0) std::memset(buffer, 0, bytes);
  if (!mpi.Barrier(std::chrono::hours(1), "broadcast start").ok()) mpi.Abort(1);
  const auto start = std::chrono::steady_clock::now();
  if (!mpi.Broadcast(std::as_writable_bytes(std::span(buffer, bytes)), 0).ok()) mpi.Abort(1);
  Outcome mine;
  mine.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  mine.sum = mooncake::Checksum64(buffer, bytes);
  // The slowest rank's time, and every rank's bytes against rank 0's XXH3-64.
  mooncake::WireWriter w;
  w.Put<double>(mine.seconds);
  w.Put<uint64_t>(mine.sum);
  const auto all = mpi.AllGather(w.Take());
  double slowest = 0;
  uint64_t root_sum = 0;
  int all_ok = 1;
  for (int r = 0; r < size; ++r) {
    mooncake::WireReader in(all[r]);
    Outcome o;
    in.Get(&o.seconds);
    in.Get(&o.sum);
    if (r == 0) root_sum = o.sum;
    slowest = std::max(slowest, o.seconds);
    if (!in.ok() || o.sum != root_sum) all_ok = 0;
  }
  if (rank == 0) {
    std::printf("bcast bytes=%llu ranks=%d seconds=%.4f GBps=%.3f verified=%d\n",
                static_cast<unsigned long long>(bytes), size, slowest,
                static_cast<double>(bytes) / slowest / 1e9, all_ok);
  }
  std::free(buffer);
  return all_ok ? 0 : 1;  // ~MpiSession: MPI_Finalize
}

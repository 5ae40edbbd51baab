// The MPI_Bcast baseline of benchmarks/p2p_vs_bcast.sh: rank 0 reads a file into memory, then
// every rank times one MPI_Bcast of its bytes (Open MPI picks the algorithm, or the script pins
// one with --mca coll_tuned_bcast_algorithm). The time is from a barrier to the moment the last
// rank holds the bytes (the maximum over ranks); each receiver then checks them against rank
// 0's XXH3-64 (not timed), so the baseline is known to deliver what p2p delivers.
//
//   mpirun -np N build/p2p_bcast_bench FILE         one timed broadcast of FILE's bytes
//   build/p2p_bcast_bench --make FILE SIZE_BYTES    writes SIZE_BYTES pseudo-random bytes
//
// Prints: "bcast bytes=B ranks=N seconds=S GBps=G verified=1". MPI lives only in this main
// (and src/cluster), as the project's layering asks.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/checksum.h"

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
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t bytes = 0;
  if (rank == 0) {
    FILE* f = std::fopen(argv[1], "rb");
    if (f != nullptr && std::fseek(f, 0, SEEK_END) == 0)
      bytes = static_cast<uint64_t>(std::ftell(f));
    if (f != nullptr) std::fclose(f);
  }
  MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  // Whole MiB per element (a count fits an int for any size here); the tail goes separately.
  constexpr uint64_t kUnit = 1 << 20;
  char* buffer = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096 + 4096));
  if (buffer == nullptr || bytes == 0 || (rank == 0 && !ReadFile(argv[1], buffer, bytes))) {
    if (rank == 0) std::fprintf(stderr, "p2p_bcast_bench: cannot read %s\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // The receivers' pages are touched before the clock starts, as the P2P side's buffers are
  // (it registers them first): otherwise the broadcast pays their page faults and looks slower.
  if (rank != 0) std::memset(buffer, 0, bytes);
  MPI_Datatype unit;
  MPI_Type_contiguous(static_cast<int>(kUnit), MPI_BYTE, &unit);
  MPI_Type_commit(&unit);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  MPI_Bcast(buffer, static_cast<int>(bytes / kUnit), unit, 0, MPI_COMM_WORLD);
  if (bytes % kUnit != 0) {
    MPI_Bcast(buffer + bytes / kUnit * kUnit, static_cast<int>(bytes % kUnit), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  }
  double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  uint64_t sum = mooncake::Checksum64(buffer, bytes), root_sum = sum;
  MPI_Bcast(&root_sum, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int ok = sum == root_sum ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("bcast bytes=%llu ranks=%d seconds=%.4f GBps=%.3f verified=%d\n",
                static_cast<unsigned long long>(bytes), size, slowest,
                static_cast<double>(bytes) / slowest / 1e9, all_ok);
  }
  MPI_Type_free(&unit);
  std::free(buffer);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}

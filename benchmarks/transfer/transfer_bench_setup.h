// Shared by transfer_bench and the multi-rank transport tests (tests/transport_mpi): a verifiable
// byte pattern, page-aligned buffers, and the UCX transport brought up over MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"
#include "common/status.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_config.h"

namespace mooncake::bench {

// Pattern bytes: byte i of the pattern `seed` is a pure function of (seed, i), so any range
// [offset, offset + length) can be generated or checked on its own, by any rank.
void FillPattern(uint64_t seed, uint64_t offset, std::span<std::byte> out);
// Index of the first byte of `data` that differs from the pattern at `offset`, or -1.
int64_t FindPatternMismatch(uint64_t seed, uint64_t offset, std::span<const std::byte> data);

// Page-aligned heap buffer, freed with free().
struct FreeDeleter {
  void operator()(std::byte* p) const;
};
using Buffer = std::unique_ptr<std::byte[], FreeDeleter>;
Buffer AllocateBuffer(size_t bytes);

// A rank's transport, connected to every rank, with each rank's exported regions imported.
struct Connected {
  std::unique_ptr<transport::Transport> transport;
  std::vector<Buffer> owned;                                     // heap buffers, when used
  std::vector<transport::MemoryRegion> local;                    // in the order of the sizes
  std::vector<std::vector<transport::RemoteDescriptor>> remote;  // [rank][region]
  bool transport_memory = false;  // regions came from Transport::AllocateMemory
};

// Collective over `mpi`: creates the UCX transport with `config`, obtains one registered region
// per entry of `sizes` (from Transport::AllocateMemory when `allocate` and the backend can, else
// page-aligned heap memory), exchanges worker addresses and descriptors, connects and imports.
Result<Connected> ConnectUcx(const cluster::Bootstrap& mpi, const transport::UcxConfig& config,
                             const std::vector<size_t>& sizes, bool allocate,
                             transport::MessageHandler handler = nullptr);

// Orderly stop (collective): barrier, BeginShutdown, barrier, Close.
Status Shutdown(const cluster::Bootstrap& mpi, Connected& c, Nanos timeout);

}  // namespace mooncake::bench

// MpiSession::Broadcast: the tools' blocking MPI_Bcast (mpi_session.h says who uses it).
#include <mpi.h>

#include "cluster/mpi/mpi_session.h"

namespace mooncake::cluster {

Status MpiSession::Broadcast(std::span<std::byte> bytes, int root) const {
  // Whole MiB per element (a count fits an int for any size here); the tail goes separately.
  constexpr uint64_t kUnit = 1 << 20;
  const uint64_t size = bytes.size();
  if (size / kUnit > 0) {
    MPI_Datatype unit;
    MPI_Type_contiguous(static_cast<int>(kUnit), MPI_BYTE, &unit);
    MPI_Type_commit(&unit);
    const int rc =
        MPI_Bcast(bytes.data(), static_cast<int>(size / kUnit), unit, root, MPI_COMM_WORLD);
    MPI_Type_free(&unit);
    if (rc != MPI_SUCCESS) return PeerFailure("MPI_Bcast failed on rank " + std::to_string(rank_));
  }
  if (size % kUnit != 0 &&
      MPI_Bcast(bytes.data() + size / kUnit * kUnit, static_cast<int>(size % kUnit), MPI_BYTE, root,
                MPI_COMM_WORLD) != MPI_SUCCESS) {
    return PeerFailure("MPI_Bcast failed on rank " + std::to_string(rank_));
  }
  return Status::Ok();
}

}  // namespace mooncake::cluster

// The MPI seam: bootstrap and membership only (DESIGN.md "Three planes"). The only header whose
// .cc includes <mpi.h>; nothing on the request path calls it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

class MpiSession {
 public:
  // Initialises MPI once (MPI_THREAD_MULTIPLE is not needed: only the main thread calls MPI).
  static Result<std::unique_ptr<MpiSession>> Init(int* argc, char*** argv);
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& hostname() const { return hostname_; }

  // Every rank contributes `mine`; every rank receives all contributions, index = rank
  // (MPI_Allgather of the sizes, then MPI_Allgatherv of the bytes).
  std::vector<std::vector<std::byte>> AllGather(std::span<const std::byte> mine) const;
  // Rank `root` receives all contributions; other ranks get an empty vector.
  std::vector<std::vector<std::byte>> Gather(std::span<const std::byte> mine, int root) const;

  // A barrier that never blocks the calling thread inside MPI for long: MPI_Ibarrier polled
  // with short sleeps, so UCX progress threads keep serving peers' one-sided operations (UCX
  // 1.13 emulates RMA over active messages; a target stuck in MPI_Barrier stalls its peers).
  // Fails with Timeout after `timeout`.
  Status Barrier(Nanos timeout) const;

  // Aborts the whole job (MPI_Abort) with `code`; for unrecoverable errors during bootstrap.
  // After Leave, only this rank ends (with `code`).
  [[noreturn]] void Abort(int code) const;

  // Collective, while every rank is alive: this rank leaves MPI (MPI_Finalize) once the
  // bootstrap is over; from then on only the UCX RPC connects the ranks, and no other method
  // but Abort may be called. Why: a rank that is still an MPI (PMIx) client cannot die alone.
  // Slurm 22.05's PMIx plugin kills the whole step when one of its clients dies (measured:
  // "_errhandler ... status = -61" then "STEP CANCELLED"), and Open MPI 4.1's MPI_Finalize
  // hangs when a peer died. A rank that has left can be killed and the others go on.
  void Leave() const;

 private:
  MpiSession() = default;
  int rank_ = 0;
  int size_ = 1;
  std::string hostname_;
};

}  // namespace mooncake::cluster

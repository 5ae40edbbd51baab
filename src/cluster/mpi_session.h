// The MPI seam: bootstrap and membership only (DESIGN.md "Three planes"). The only header whose
// .cc includes <mpi.h>; nothing on the request path calls it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
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

  // The job's collectives, each one named `step` ("bootstrap exchange"): nonblocking MPI polled
  // with short sleeps until `timeout`, so a rank that died before or during the step cannot hang
  // the others (a blocking MPI_Allgather waits for ever). Every rank first tells the step's root
  // that it arrived, so on the root a Timeout names the ranks that never did; the other ranks'
  // Timeout says that the root names them. MPI cannot cancel a collective: after a failed step
  // the caller ends the job (Abort), and the step's buffers stay allocated until it does.
  //
  // AllGather: every rank contributes `mine` and receives all contributions, index = rank.
  Result<std::vector<std::vector<std::byte>>> AllGather(std::span<const std::byte> mine,
                                                        std::string_view step, Nanos timeout) const;
  // Gather: rank `root` receives all contributions; the other ranks get an empty vector.
  Result<std::vector<std::vector<std::byte>>> Gather(std::span<const std::byte> mine, int root,
                                                     std::string_view step, Nanos timeout) const;
  // Barrier: MPI_Ibarrier, polled the same way. Polling also keeps UCX progress threads serving
  // peers' one-sided operations (UCX 1.13 emulates RMA over active messages; a target stuck in
  // MPI_Barrier stalls its peers).
  Status Barrier(Nanos timeout, std::string_view step = "barrier") const;
  // The ranks that this rank, as root, found missing at the last step that timed out (empty on
  // the other ranks, and before any step failed).
  const std::vector<int>& missing_at_last_step() const { return missing_; }

  // Tools and tests whose collectives need no deadline of their own: the forms above with a day
  // as the deadline; a failed step aborts the job (Abort(1)) with the step's message.
  std::vector<std::vector<std::byte>> AllGather(std::span<const std::byte> mine) const;
  std::vector<std::vector<std::byte>> Gather(std::span<const std::byte> mine, int root) const;

  // Aborts the whole job (MPI_Abort) with `code`; for unrecoverable errors during bootstrap.
  // After Leave, only this rank ends (with `code`). Under orte_enable_recovery (the default of
  // launch/mooncake-mpirun) MPI_Abort ends only the calling rank (measured with Open MPI 4.1.4:
  // the others ran on), so each rank that gives up calls it for itself.
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
  mutable int steps_ = 0;  // collective steps so far: tags each step's arrival messages apart
  mutable std::vector<int> missing_;
};

}  // namespace mooncake::cluster

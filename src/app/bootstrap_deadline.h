// A bootstrap that cannot hang (docs/FAULTS.md "A rank lost during the bootstrap"). Until the
// ranks leave MPI, a rank that died stalls the others inside MPI: MPI_Init waits for every
// rank's startup information, a collective for every rank's part, MPI_Finalize for every rank,
// none with a deadline. Here each of those waits is bounded by job.phase_timeout; when one
// passes, the job ends: the message names the step and (rank 0) the missing ranks, rank 0 writes
// bootstrap.json into the run folder and the job's exit status, and every rank ends.
#pragma once

#include <functional>
#include <string_view>

#include "app/options.h"
#include "cluster/bootstrap.h"
#include "common/status.h"

namespace mooncake::app {

// The exit status of a job whose bootstrap did not complete (as for a phase barrier that timed
// out later on).
constexpr int kBootstrapFailedExit = 3;

// Ends this rank because a bootstrap step failed (`why` names it). Rank 0 writes the run folder
// (bootstrap.json) and the status file, then ends; the other ranks first wait a few seconds, so
// that rank 0's message and files are out before a fail-stop launcher kills it. With `mpi`, the
// rank ends with MPI_Abort (plain mpirun then ends every rank; under orte_enable_recovery each
// rank ends itself, all having reached the same deadline); without, with _Exit.
[[noreturn]] void EndBootstrap(const JobOptions& o, const cluster::Bootstrap* mpi, int rank,
                               const Status& why);

// A step's result, or the end of the job.
template <typename T>
T OrEndBootstrap(Result<T> r, const JobOptions& o, const cluster::Bootstrap& mpi) {
  if (!r.ok()) EndBootstrap(o, &mpi, mpi.rank(), r.status());
  return std::move(*r);
}
inline void OrEndBootstrap(const Status& s, const JobOptions& o, const cluster::Bootstrap& mpi) {
  if (!s.ok()) EndBootstrap(o, &mpi, mpi.rank(), s);
}

// Runs `call`, a blocking MPI call without a deadline of its own (MPI_Init, MPI_Finalize), under
// a watchdog thread: when it has not returned within `timeout`, the watchdog ends the rank
// (EndBootstrap without MPI: the calling thread is still inside MPI).
void WithDeadline(std::string_view step, Nanos timeout, const JobOptions& o, int rank,
                  const std::function<void()>& call);

// MpiSession::Leave (MPI_Finalize, which waits for every rank) under job.phase_timeout.
void LeaveMpi(const JobOptions& o, const cluster::Bootstrap& mpi);

}  // namespace mooncake::app

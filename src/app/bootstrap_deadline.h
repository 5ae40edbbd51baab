// The job's side of a bootstrap that cannot hang (cluster/bootstrap_end.h): each wait is bounded
// by job.phase_timeout; when one passes, rank 0 writes bootstrap.json into the run folder and the
// job's exit status, and every rank ends with kBootstrapFailedExit.
#pragma once

#include <functional>
#include <string_view>

#include "app/options.h"
#include "cluster/bootstrap.h"
#include "cluster/bootstrap_end.h"
#include "common/status.h"

namespace mooncake::app {

// The exit status of a job whose bootstrap did not complete (as for a phase barrier that timed
// out later on).
constexpr int kBootstrapFailedExit = 3;

// How this job ends when its bootstrap fails: kBootstrapFailedExit, and rank 0's report.
cluster::BootstrapEnd BootstrapEndOf(const JobOptions& o);

// cluster::EndBootstrap with this job's end.
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

// Bootstrap::Leave (MPI_Finalize, which waits for every rank) under job.phase_timeout.
void LeaveMpi(const JobOptions& o, const cluster::Bootstrap& mpi);

}  // namespace mooncake::app

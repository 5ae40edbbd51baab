// The bootstrap over MPI (cluster/bootstrap.h). The only folder whose .cc files include <mpi.h>;
// nothing on the request path calls it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/bootstrap.h"
#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

class MpiSession final : public Bootstrap {
 public:
  // Initialises MPI once (MPI_THREAD_MULTIPLE is not needed: only the main thread calls MPI).
  static Result<std::unique_ptr<MpiSession>> Init(int* argc, char*** argv);
  ~MpiSession() override;  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& hostname() const override { return hostname_; }
  const std::vector<int>& missing_at_last_step() const override { return missing_; }

  // MPI_Bcast of `bytes` from `root`, whatever their size: blocking and without a deadline, for
  // tools only (the MPI_Bcast baseline, benchmarks/p2p_bcast_bench.cc), not the job's bootstrap.
  Status Broadcast(std::span<std::byte> bytes, int root) const;

  // MPI_Abort with `code`. After Leave, only this rank ends (with `code`). Under
  // orte_enable_recovery (the default of launch/mooncake-mpirun) MPI_Abort ends only the calling
  // rank (measured with Open MPI 4.1.4: the others ran on), so each rank that gives up calls it
  // for itself.
  [[noreturn]] void Abort(int code) const override;

  // MPI_Finalize. Why a rank leaves MPI once the bootstrap is over: a rank that is still an MPI
  // (PMIx) client cannot die alone. Slurm 22.05's PMIx plugin kills the whole step when one of
  // its clients dies (measured: "_errhandler ... status = -61" then "STEP CANCELLED"), and Open
  // MPI 4.1's MPI_Finalize hangs when a peer died. A rank that has left can be killed and the
  // others go on.
  void Leave() const override;

 private:
  MpiSession() = default;

  // The steps are nonblocking MPI polled with short sleeps until `timeout` (a blocking
  // MPI_Allgather waits for ever). Every rank first tells the step's root that it arrived, so on
  // the root a Timeout names the ranks that never did. MPI cannot cancel a collective: after a
  // failed step the step's buffers stay allocated until the job ends.
  Result<Records> DoAllGather(std::span<const std::byte> mine, std::string_view step,
                              Nanos timeout) const override;
  Result<Records> DoGather(std::span<const std::byte> mine, int root, std::string_view step,
                           Nanos timeout) const override;
  // MPI_Ibarrier, polled the same way. Polling also keeps UCX progress threads serving peers'
  // one-sided operations (UCX 1.13 emulates RMA over active messages; a target stuck in
  // MPI_Barrier stalls its peers).
  Status DoBarrier(Nanos timeout, std::string_view step) const override;

  int rank_ = 0;
  int size_ = 1;
  std::string hostname_;
  mutable int steps_ = 0;  // collective steps so far: tags each step's arrival messages apart
  mutable std::vector<int> missing_;
};

}  // namespace mooncake::cluster

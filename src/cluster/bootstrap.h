// The bootstrap: the job's collective steps before the RPC connects its ranks (DESIGN.md "Three
// planes"): every rank's record exchanged, records gathered at one rank, barriers. Roles and the
// store take this interface; which implementation runs is chosen where the process starts
// (src/app, the tools' main()). Implementations: MpiSession (cluster/mpi/mpi_session.h), the
// only code that includes <mpi.h>.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

// One byte string per rank, index = rank.
using Records = std::vector<std::vector<std::byte>>;

// A step's Timeout as every Bootstrap words it: on the step's `root`, naming `missing` (the ranks
// that never arrived; empty: every rank arrived but the step did not complete), elsewhere
// pointing at the root.
Status StepTimeout(std::string_view step, Nanos timeout, int rank, int root,
                   const std::vector<int>& missing);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const std::string& hostname() const = 0;

  // Each step is named (`step`, "bootstrap exchange") and bounded by `timeout`, so that a rank
  // that died before or during it cannot hang the others; on a Timeout, the step's root (rank 0
  // for AllGather and Barrier) names the ranks that never arrived, the others say that the root
  // names them. A step that failed cannot be undone: the caller ends the job (Abort).
  //
  // AllGather: every rank contributes `mine` and receives all contributions.
  Result<Records> AllGather(std::span<const std::byte> mine, std::string_view step,
                            Nanos timeout) const {
    return DoAllGather(mine, step, timeout);
  }
  // Gather: rank `root` receives all contributions; the other ranks get an empty vector. A
  // `root` outside the job is an InvalidArgument on every rank, before any rank waits.
  Result<Records> Gather(std::span<const std::byte> mine, int root, std::string_view step,
                         Nanos timeout) const;
  Status Barrier(Nanos timeout, std::string_view step = "barrier") const {
    return DoBarrier(timeout, step);
  }
  // The ranks that this rank, as root, found missing at the last step that timed out (empty on
  // the other ranks, and before any step failed).
  virtual const std::vector<int>& missing_at_last_step() const = 0;

  // Tools and tests whose steps need no deadline of their own: the forms above with a day as
  // the deadline; a failed step aborts the job (Abort(1)) with the step's message.
  Records AllGather(std::span<const std::byte> mine) const;
  Records Gather(std::span<const std::byte> mine, int root) const;

  // Ends the job with `code` after an unrecoverable error during the bootstrap; after Leave,
  // only this rank ends.
  [[noreturn]] virtual void Abort(int code) const = 0;
  // Collective, while every rank is alive: the bootstrap is over and this rank leaves it; from
  // then on only the RPC connects the ranks, a rank can die alone, and no method but Abort may
  // be called.
  virtual void Leave() const = 0;

 private:
  // The steps each bootstrap implements (a Gather's root is checked already). The public forms
  // above are not virtual, so that an implementation's declarations hide none of them and the
  // Barrier's default step name is written once.
  virtual Result<Records> DoAllGather(std::span<const std::byte> mine, std::string_view step,
                                      Nanos timeout) const = 0;
  virtual Result<Records> DoGather(std::span<const std::byte> mine, int root, std::string_view step,
                                   Nanos timeout) const = 0;
  virtual Status DoBarrier(Nanos timeout, std::string_view step) const = 0;
};

// AllGather of one text per rank (a host name, a path), in rank order.
Result<std::vector<std::string>> AllGatherText(const Bootstrap& bootstrap, std::string_view mine,
                                               std::string_view step, Nanos timeout);

}  // namespace mooncake::cluster

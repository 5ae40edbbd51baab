// A bootstrap that cannot hang (docs/FAULTS.md "A rank lost during the bootstrap"). Until the
// ranks leave the bootstrap, a rank that died stalls the others inside it: MPI_Init waits for
// every rank's startup information, a collective for every rank's part, MPI_Finalize for every
// rank, none with a deadline. Each of those waits is bounded; when one passes, the job ends:
// rank 0 reports what is known (the caller says how), then every rank ends.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "cluster/bootstrap.h"
#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

struct BootstrapEnd {
  int exit_code = 1;  // every rank's
  // Rank 0, before it ends: writes what is known (`why`; `bootstrap` is null when the bootstrap
  // is not up, or its thread is stuck inside it) and returns the file a reader should see, or ""
  // when there is none. Runs on the thread that gives up (WithDeadline's watchdog).
  std::function<std::string(const Status& why, const Bootstrap* bootstrap)> report;
};

// Ends this rank because a bootstrap step failed (`why` names it). Rank 0 reports, then ends;
// the other ranks first wait a few seconds, so that rank 0's message and files are out before a
// fail-stop launcher kills it. With `bootstrap`, the rank ends with its Abort (plain mpirun then
// ends every rank; under orte_enable_recovery each rank ends itself, all having reached the same
// deadline); without, with _Exit.
[[noreturn]] void EndBootstrap(const BootstrapEnd& end, const Bootstrap* bootstrap, int rank,
                               const Status& why);

// Runs `call`, a blocking call without a deadline of its own (MPI_Init, MPI_Finalize), under a
// watchdog thread: when it has not returned within `timeout`, the watchdog ends the rank
// (EndBootstrap without the bootstrap: the calling thread is still inside it).
void WithDeadline(std::string_view step, Nanos timeout, const BootstrapEnd& end, int rank,
                  const std::function<void()>& call);

}  // namespace mooncake::cluster

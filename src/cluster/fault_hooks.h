// The job's fault hooks (tests, docs/FAULTS.md): fault.kill / fault.stop make a rank signal
// itself at a point of the job, to show what the others do when it dies or hangs.
#pragma once

#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

// fault.kill / fault.stop: rank `rank` signals itself `at` (wall time) after the replay starts;
// fault.kill can also strike during the bootstrap (docs/FAULTS.md), before MPI_Init or just
// before the bootstrap exchange.
enum class FaultPoint { kReplay, kBeforeMpiInit, kBootstrapExchange };
struct FaultSpec {
  int rank = -1;  // -1: no fault
  Nanos at{0};
  FaultPoint point = FaultPoint::kReplay;
};

// "RANK@TIME", e.g. "2@8s": rank 2, 8 s after the replay starts; fault.kill (`name`) also takes
// "RANK@mpi_init" and "RANK@bootstrap". An empty value leaves `*out` alone (no fault).
Status FaultSpecOption(const char* name, const std::string& value, FaultSpec* out);

// fault.kill / fault.stop at kReplay on this rank: a thread signals the process (SIGKILL,
// SIGSTOP) at the given time. A stopped rank is resumed 5 x `failure_timeout` after it stopped:
// declared dead by then (with room for a conductor slowed by a loaded machine), it is fenced and
// ends itself, or, with the job already over, finds no conductor.
void ArmFaults(const FaultSpec& kill, const FaultSpec& stop, int rank, Nanos failure_timeout);

}  // namespace mooncake::cluster

// Sweeps: `--sweep key=v1,v2,...` (repeatable) gives the cartesian product of the axes. The
// points are spread over ranks through a SweepComm seam, so this library never includes
// <mpi.h>: the serial twin runs every point in one process; src/app wires an MPI one.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace mooncake::eval {

struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};
using SweepPoint = std::vector<std::pair<std::string, std::string>>;  // (key, value) per axis

// "conductor.policy=random,cache_aware" -> axis. Errors name the spec.
Result<SweepAxis> ParseSweepSpec(const std::string& spec);
// Cartesian product, first axis slowest. No axes: one empty point.
std::vector<SweepPoint> CartesianPoints(const std::vector<SweepAxis>& axes);
// The points rank `rank` of `size` runs: i % size == rank (similar points cost alike, so
// round-robin balances the ranks).
std::vector<size_t> PointsForRank(size_t points, int rank, int size);

struct SweepComm {
  int rank = 0;
  int size = 1;
  // Collective: every rank passes its text; rank 0 gets all ranks' texts in rank order,
  // the others may get an empty vector.
  std::function<std::vector<std::string>(const std::string&)> gather;
};
SweepComm SerialSweepComm();

}  // namespace mooncake::eval

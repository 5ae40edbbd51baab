// The bootstrap of ranks that are threads of one process (as the loopback transport's ranks
// are): unit tests and single-process runs bootstrap without MPI, with MpiSession's contract
// (named steps, each with a deadline; the root names the ranks that never arrived).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/bootstrap.h"

namespace mooncake::cluster {

class InProcessGroup;

class InProcessBootstrap final : public Bootstrap {
 public:
  // One bootstrap per rank of a group of `size`, every rank on host `host`. Each is used by its
  // rank's thread; the group lives as long as any of them.
  static std::vector<std::unique_ptr<InProcessBootstrap>> CreateGroup(
      int size, const std::string& host = "localhost");

  int rank() const override { return rank_; }
  int size() const override;
  const std::string& hostname() const override;
  const std::vector<int>& missing_at_last_step() const override { return missing_; }

  // The ranks share one process: ends it (_Exit with `code`).
  [[noreturn]] void Abort(int code) const override;
  void Leave() const override {}  // nothing holds a rank here once the bootstrap is over

 private:
  InProcessBootstrap(std::shared_ptr<InProcessGroup> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  // A rank contributes and returns at once from a Gather whose root it is not (as MPI's
  // non-root ranks do); every other step waits for all ranks or `timeout`.
  Result<Records> DoAllGather(std::span<const std::byte> mine, std::string_view step,
                              Nanos timeout) const override;
  Result<Records> DoGather(std::span<const std::byte> mine, int root, std::string_view step,
                           Nanos timeout) const override;
  Status DoBarrier(Nanos timeout, std::string_view step) const override;
  // One step: contributes `mine`; waits for every rank (unless `wait_all` is false) until
  // `timeout`; returns every contribution.
  Result<Records> Step(std::span<const std::byte> mine, int root, bool wait_all,
                       std::string_view step, Nanos timeout) const;

  std::shared_ptr<InProcessGroup> group_;
  int rank_;
  mutable int steps_ = 0;  // steps so far: this rank's next step is the group's step `steps_`
  mutable std::vector<int> missing_;
};

}  // namespace mooncake::cluster

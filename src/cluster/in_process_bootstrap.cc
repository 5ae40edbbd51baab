#include "cluster/in_process_bootstrap.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

namespace mooncake::cluster {

// What the ranks share: each step's contributions, kept until every rank is done with it.
class InProcessGroup {
 public:
  InProcessGroup(int size, std::string host) : size_(size), host_(std::move(host)) {}
  int size() const { return size_; }
  const std::string& host() const { return host_; }

  struct Slot {
    std::vector<std::optional<std::vector<std::byte>>> contributions;
    int arrived = 0;
    int done = 0;  // ranks finished with the step; at size_ the slot goes
  };
  std::mutex mu;
  std::condition_variable changed;
  std::map<int, Slot> steps;  // by step number

 private:
  const int size_;
  const std::string host_;
};

std::vector<std::unique_ptr<InProcessBootstrap>> InProcessBootstrap::CreateGroup(
    int size, const std::string& host) {
  auto group = std::make_shared<InProcessGroup>(size, host);
  std::vector<std::unique_ptr<InProcessBootstrap>> ranks;
  for (int r = 0; r < size; ++r) ranks.emplace_back(new InProcessBootstrap(group, r));
  return ranks;
}

int InProcessBootstrap::size() const { return group_->size(); }
const std::string& InProcessBootstrap::hostname() const { return group_->host(); }

Result<Records> InProcessBootstrap::Step(std::span<const std::byte> mine, int root, bool wait_all,
                                         std::string_view step, Nanos timeout) const {
  const int n = group_->size();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(group_->mu);
  const int number = steps_++;
  auto& slot = group_->steps[number];
  if (slot.contributions.empty()) slot.contributions.resize(n);
  slot.contributions[rank_].emplace(mine.begin(), mine.end());
  ++slot.arrived;
  group_->changed.notify_all();
  const bool complete =
      !wait_all || group_->changed.wait_until(lock, deadline, [&] { return slot.arrived == n; });
  missing_.clear();
  Records all;
  if (complete && wait_all) {
    for (auto& c : slot.contributions) all.push_back(*c);
  }
  if (!complete && rank_ == root) {
    for (int r = 0; r < n; ++r) {
      if (!slot.contributions[r]) missing_.push_back(r);
    }
  }
  if (++slot.done == n) group_->steps.erase(number);
  if (!complete) return StepTimeout(step, timeout, rank_, root, missing_);
  return all;
}

Result<Records> InProcessBootstrap::DoAllGather(std::span<const std::byte> mine,
                                                std::string_view step, Nanos timeout) const {
  return Step(mine, 0, true, step, timeout);
}

Result<Records> InProcessBootstrap::DoGather(std::span<const std::byte> mine, int root,
                                             std::string_view step, Nanos timeout) const {
  return Step(mine, root, rank_ == root, step, timeout);
}

Status InProcessBootstrap::DoBarrier(Nanos timeout, std::string_view step) const {
  auto all = Step({}, 0, true, step, timeout);
  return all.ok() ? Status::Ok() : all.status();
}

void InProcessBootstrap::Abort(int code) const {
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace mooncake::cluster

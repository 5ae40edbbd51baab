#include "serve/conductor_link.h"

#include <thread>

#include "common/log.h"

namespace mooncake::serve {

ConductorLink::ConductorLink(transport::Rpc& rpc, ConductorLinkConfig config)
    : rpc_(rpc), config_(config), conductor_(config.conductor.value) {}

Status ConductorLink::Notify(uint16_t type, std::vector<std::byte> bytes) {
  const Rank to = conductor();
  Status s = rpc_.Notify(to, type, bytes);
  if (!config_.standby) return s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Nanos now = clock_.Now();
    while (!kept_.empty() && now - kept_.front().sent > config_.keep) kept_.pop_front();
    kept_.push_back(Kept{now, type, std::move(bytes)});
  }
  if (!s.ok()) {
    log::Warn("report to the conductor (rank {}) not sent, kept for its successor: {}", to.value,
              s.ToString());
  }
  return Status::Ok();
}

Result<std::vector<std::byte>> ConductorLink::Call(uint16_t type,
                                                   std::span<const std::byte> request,
                                                   Nanos timeout) {
  Rank asked = conductor();
  auto r = rpc_.Call(asked, type, request, timeout);
  if (r.ok() || !config_.standby) return r;
  // The conductor may be dead and its standby about to take over: ask the new one.
  const Nanos give_up = clock_.Now() + config_.switch_wait;
  while (clock_.Now() < give_up) {
    if (conductor() != asked) {
      asked = conductor();
      log::Warn("rpc type {} failed at the old conductor ({}): asking the new one, rank {}", type,
                r.status().ToString(), asked.value);
      r = rpc_.Call(asked, type, request, timeout);
      if (r.ok()) return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return r;
}

void ConductorLink::SwitchTo(Rank conductor) {
  if (conductor_.exchange(conductor.value) == conductor.value) return;
  std::lock_guard<std::mutex> lock(mutex_);
  log::Warn("the conductor is rank {} now: {} kept report(s) sent to it again", conductor.value,
            kept_.size());
  for (const Kept& k : kept_) {
    Status s = rpc_.Notify(conductor, k.type, k.bytes);
    if (!s.ok()) log::Warn("report to the new conductor: {}", s.ToString());
    ++resent_;
  }
}

}  // namespace mooncake::serve

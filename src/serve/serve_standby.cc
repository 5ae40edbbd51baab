#include "serve/serve_standby.h"

#include "common/log.h"
#include "common/threads.h"
#include "serve/messages.h"

namespace mooncake::serve {

void ServeFollower::Start() {
  transport::CheckRegistered(
      rpc_.Register(kMsgServeJournal, [this](Rank from, std::span<const std::byte> bytes,
                                             transport::Responder) { Apply(from, bytes); }));
}

void ServeFollower::Apply(Rank from, std::span<const std::byte> bytes) {
  if (from != active_) return;  // only the active conductor's journal counts
  auto batch = ServeJournalBatch::Decode(bytes);
  if (!batch.ok()) {
    log::Error("serving journal from rank {}: {}", from.value, batch.status().ToString());
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (promoted_) return;
  ++state_.batches;
  // Whole records: a batch older than one applied already changes nothing that one did not.
  if (batch->seq > last_seq_) {
    last_seq_ = batch->seq;
    state_.replay_next = batch->replay_next;
    state_.start_wall_ns = batch->start_wall_ns;
    state_.run_dir = batch->run_dir;
    state_.totals = batch->totals;
  }
  for (RequestState& r : batch->requests) {
    uint64_t& seq = seq_of_[r.id];
    if (batch->seq < seq) continue;
    seq = batch->seq;
    state_.requests[r.id] = std::move(r);
  }
}

ServeState ServeFollower::Promote() {
  std::lock_guard<std::mutex> lock(mutex_);
  promoted_ = true;
  return state_;
}

uint64_t ServeFollower::batches() const { return CopyLocked(mutex_, state_.batches); }

}  // namespace mooncake::serve

// ServeFollower: a standby conductor's copy of the serving state (serve_journal.h), applied as
// the active conductor's batches arrive (kMsgServeJournal). On takeover Promote hands it over:
// the new conductor's ConductorRole restores it (ConductorRole::Restore) and resolves what was
// in flight. The store master's journal is store::StandbyNode's, beside it.
//
// Threading: the handler runs on the RPC's dispatcher thread; the rest from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/ids.h"
#include "serve/serve_journal.h"
#include "transport/rpc.h"

namespace mooncake::serve {

struct ServeState {
  uint64_t batches = 0;      // batches applied
  uint64_t replay_next = 0;  // trace requests [0, replay_next) were decided by the active
  int64_t start_wall_ns = 0;
  std::string run_dir;
  std::vector<uint64_t> totals;
  std::map<uint64_t, RequestState> requests;  // by request id
};

class ServeFollower {
 public:
  // `rpc` must outlive the follower. `active`: the rank whose journal is taken.
  ServeFollower(transport::Rpc& rpc, Rank active) : rpc_(rpc), active_(active) {}
  // Registers the journal's handler: before the active may send (before the bootstrap barrier).
  void Start();
  // Stops taking the journal and returns the state as the last batch left it.
  ServeState Promote();
  uint64_t batches() const;

 private:
  void Apply(Rank from, std::span<const std::byte> bytes);

  transport::Rpc& rpc_;
  Rank active_;
  mutable std::mutex mutex_;
  bool promoted_ = false;                // guarded by mutex_
  uint64_t last_seq_ = 0;                // guarded by mutex_
  std::map<uint64_t, uint64_t> seq_of_;  // request -> the batch that last named it (guarded)
  ServeState state_;                     // guarded by mutex_
};

}  // namespace mooncake::serve

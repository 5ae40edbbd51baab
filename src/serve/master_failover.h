// What the two jobs with a standby conductor (the serving job, job.mode = store) share about it:
// the active master's journal to the standby, and the takeover's record for summary.json's
// `failover` block (docs/FAULTS.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "serve/rank_lifecycle.h"
#include "serve/serve_config.h"
#include "store/net/journal_sender.h"
#include "store/net/master_service.h"
#include "store/node/standby_node.h"
#include "store/standby_table.h"
#include "transport/rpc.h"

namespace mooncake::serve {

// A takeover as summary.json tells it. The serving fields stay out of the store job's block.
struct FailoverReport {
  bool standby = false;    // the job has one
  bool took_over = false;  // this rank took over
  int old_conductor = -1;
  uint64_t epoch = 0;                  // the membership epoch the takeover made
  uint64_t journal_entries = 0;        // store master entries applied before the takeover
  uint64_t objects_restored = 0;       // store objects the new master started with
  bool serving = false;                // the three below are the serving job's
  uint64_t serve_batches = 0;          // serving journal batches applied before the takeover
  uint64_t requests_restored = 0;      // requests the journal named (decided by the old active)
  uint64_t requests_redispatched = 0;  // in flight at the takeover and dispatched again
  double ready_ms = 0;                 // last heartbeat of the old active -> this rank conducts
  double takeover_ms = -1;             // ... -> its first decision or request served (-1: none yet)
};

// The `failover` block: {"standby": true, "took_over": ...} and, after a takeover, its numbers
// (takeover_ms null when no request came).
nlohmann::json FailoverBlock(const FailoverReport& report);

// A standby's answer to its active going quiet (`why`): false after the job's stop (the conductor
// left, no failure) or when the active fenced it (its tables may be stale, it must never take
// over: `on_fenced` runs with the reason); true when it takes over.
bool MayTakeOver(const RankLifecycle& lifecycle, const Status& why,
                 const std::function<void(const Status&)>& on_fenced);

// The first step of a takeover: the old active (silent since `last_heard`) dead in a copy of the
// membership, this rank its conductor at the next epoch, and the old active marked dead on the
// RPC, so that nothing it sends is obeyed from here (its journal sends and keepalives are
// answered PeerFailure naming the epoch, which is how a woken one learns to stop); then the
// store standby promoted: the master's table as the journal left it.
struct Takeover {
  // This rank conducts it (lifecycle's Promote takes it); the type is rank_lifecycle.h's.
  cluster::Membership membership;
  Rank old_conductor;
  Nanos last_heard{0};
  uint64_t journal_entries = 0;  // store journal entries the standby applied
  store::StandbyTable table;
  // took_over and its numbers, `ready` the time this rank conducts.
  FailoverReport Report(Nanos ready) const;
};
Result<Takeover> BeginTakeover(const RankLifecycle& lifecycle, transport::Rpc& rpc, Rank self,
                               const std::string& why, store::StandbyNode& standby);

// Starts the active master's journal to `standby`: every change of `master` goes through it. A
// standby that heartbeats but does not take the journal would stall every put: it is declared
// dead through `lifecycle` (the sender then goes on alone), so it can never take over with a
// stale table. `on_fenced` runs when the standby fenced this rank (it took over).
std::unique_ptr<store::JournalSender> StartMasterJournal(
    transport::Rpc& rpc, Rank standby, const MembershipConfig& membership,
    store::MasterService& master, RankLifecycle& lifecycle,
    std::function<void(const Status&)> on_fenced);

}  // namespace mooncake::serve

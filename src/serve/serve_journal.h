// The serving state an active conductor journals to its standby (docs/FAULTS.md, "A standby
// conductor (the serving job)"): kMsgServeJournal, one-way, sent in order under the conductor's
// lock each time a request's state changed. Like the store's journal (store/journal.h) it
// carries whole records, not deltas: each request it names as the active has it now, so a later
// entry replaces an earlier one and a lost or reordered batch costs nothing the next does not
// carry again. With the records: the replay position (the next trace request to decide), the
// replay's start on the active's clock, the run folder, the conductor's totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"
#include "trace/metrics.h"

namespace mooncake::serve {

// One request as the active conductor holds it.
struct RequestState {
  uint64_t id = 0;
  uint32_t attempt = 0;       // the attempt its reports must carry
  uint32_t redispatches = 0;  // re-dispatches after a rank died (at most one)
  uint8_t dispatched = 0, kv_arrived = 0, admitted = 0, resolved = 0;
  int32_t prefill = -1, decode = -1;  // instances
  int64_t arrival_model_ns = 0, first_token_wall_ns = 0;
  // Its trace::RequestRecord (the id, arrival and lengths come from the trace).
  uint8_t outcome = 0;
  std::string reject_reason;
  uint8_t prefilled = 0;
  int32_t prefix_blocks_hit = 0, inflight_miss_blocks = 0;
  double ttft_s = 0, tbt_s = 0, e2e_s = 0, prefill_compute_s = 0, ttft_predicted_s = 0;
  std::vector<int32_t> output_ids;  // once resolved

  MC_WIRE_FIELDS(id, attempt, redispatches, dispatched, kv_arrived, admitted, resolved, prefill,
                 decode, arrival_model_ns, first_token_wall_ns, outcome, reject_reason, prefilled,
                 prefix_blocks_hit, inflight_miss_blocks, ttft_s, tbt_s, e2e_s, prefill_compute_s,
                 ttft_predicted_s, output_ids)
  // The record's fields into `r` (whose id, arrival and lengths are the trace's).
  void ToRecord(trace::RequestRecord* r) const;
  void FromRecord(const trace::RequestRecord& r);
};

// ConductorTotals as counters, in its declaration order (conductor_role.h).
struct ServeJournalBatch : WireMessage<ServeJournalBatch> {
  uint64_t seq = 0;          // 1, 2, ... per active conductor
  uint64_t replay_next = 0;  // trace requests [0, replay_next) were decided
  int64_t start_wall_ns = 0;
  std::string run_dir;
  std::vector<uint64_t> totals;
  std::vector<RequestState> requests;

  MC_WIRE_MESSAGE(ServeJournalBatch, seq, replay_next, start_wall_ns, run_dir, totals, requests)
};

}  // namespace mooncake::serve

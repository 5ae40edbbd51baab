// A recording of the calls a driver (the simulator) made to a Scheduler, with what Decide and
// AdmitToDecode answered, and its replay against another scheduler: conductor_bench times the
// conductor alone on a real call sequence, and the tests check that the pruned search answers
// exactly as the full evaluation did.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "conductor/scheduler.h"

namespace mooncake::conductor {

struct SchedulerCall {
  enum class Kind : uint8_t {
    kDecide,
    kBlocksStored,
    kPrefillDone,
    kAdmitToDecode,
    kDecodeDone,
    kMarkPrefillDead,
    kMarkDecodeDead,
    kForgetBlocks,
    kAbandon,
  };
  Kind kind = Kind::kDecide;
  int instance = -1;  // the prefill or decode instance the call names (-1: none)
  RequestId id;
  Nanos now{0};
  bool admission = true;                        // kDecide's and kAdmitToDecode's argument
  Request request;                              // kDecide; its hash_ids span as given
  std::span<const BlockHash> blocks;            // kBlocksStored, kForgetBlocks: as given
  Decision decision;                            // kDecide's answer
  RejectReason admitted = RejectReason::kNone;  // kAdmitToDecode's answer
};

struct ReplayOutcome {
  uint64_t calls = 0;
  uint64_t decisions = 0;        // Decide calls
  uint64_t differing = 0;        // answers (Decide, AdmitToDecode) unlike the recorded ones
  int64_t first_differing = -1;  // index of the first such call in the log
};

// Makes the logged calls on `scheduler`, in order, and compares its answers with the recorded
// ones. The spans in `log` must still be valid.
ReplayOutcome ReplayCalls(const std::vector<SchedulerCall>& log, Scheduler& scheduler);

}  // namespace mooncake::conductor

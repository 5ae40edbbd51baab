#include "conductor/scheduler_calls.h"

namespace mooncake::conductor {

namespace {

// Makes one call; returns false when its answer differs from the recorded one.
bool Replay(const SchedulerCall& c, Scheduler& s) {
  using Kind = SchedulerCall::Kind;
  switch (c.kind) {
    case Kind::kDecide:
      return s.Decide(c.request, c.now, c.admission) == c.decision;
    case Kind::kBlocksStored:
      s.OnBlocksStored(c.instance, c.blocks, c.now);
      return true;
    case Kind::kPrefillDone:
      s.OnPrefillDone(c.id, c.instance, c.now);
      return true;
    case Kind::kAdmitToDecode:
      return s.AdmitToDecode(c.id, c.instance, c.now, c.admission) == c.admitted;
    case Kind::kDecodeDone:
      s.OnDecodeDone(c.id, c.instance, c.now);
      return true;
    case Kind::kMarkPrefillDead:
      s.MarkPrefillDead(c.instance);
      return true;
    case Kind::kMarkDecodeDead:
      s.MarkDecodeDead(c.instance);
      return true;
    case Kind::kForgetBlocks:
      s.ForgetBlocks(c.blocks);
      return true;
    case Kind::kAbandon:
      s.Abandon(c.id);
      return true;
  }
  return true;
}

}  // namespace

ReplayOutcome ReplayCalls(const std::vector<SchedulerCall>& log, Scheduler& scheduler) {
  ReplayOutcome out;
  for (size_t k = 0; k < log.size(); ++k) {
    ++out.calls;
    if (log[k].kind == SchedulerCall::Kind::kDecide) ++out.decisions;
    if (!Replay(log[k], scheduler)) {
      if (out.differing++ == 0) out.first_differing = static_cast<int64_t>(k);
    }
  }
  return out;
}

}  // namespace mooncake::conductor

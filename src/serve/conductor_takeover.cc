// ConductorRole's standby side: the journal of every request's state to a standby conductor
// (MarkDirty, FlushJournal), and, on the standby that took over, the state restored from it
// (Restore) and what the old conductor left in flight decided again (ResolveInFlight).
#include "serve/conductor_role.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/threads.h"

namespace mooncake::serve {

namespace {

// ConductorTotals as the journal's counters (serve_journal.h), in declaration order.
template <typename Totals, typename Visit>
void VisitTotals(Totals& t, Visit&& visit) {
  visit(t.blocks_verified, t.blocks_corrupt, t.blocks_loaded, t.blocks_missing, t.bytes_loaded,
        t.bytes_stored, t.bytes_to_decode, t.dispatch_failures, t.redispatched,
        t.takeover_redispatched, t.stale_reports, t.scheduler_fetches, t.scheduler_fetched_blocks,
        t.open_requests, t.open_requests_high_water);
}

std::vector<uint64_t> TotalsToCounters(const ConductorTotals& t) {
  std::vector<uint64_t> out;
  VisitTotals(t, [&](const auto&... v) { (out.push_back(v), ...); });
  return out;
}

void TotalsFromCounters(const std::vector<uint64_t>& in, ConductorTotals* t) {
  size_t k = 0;
  VisitTotals(*t, [&](auto&... v) { ((v = k < in.size() ? in[k] : 0, ++k), ...); });
}

// A takeover's attempt numbers start here: the old conductor used 0 and 1.
constexpr uint32_t kTakeoverAttempts = 16;

}  // namespace

void ConductorRole::MarkDirty(size_t i) {
  if (journal_ && i < requests_.size()) dirty_.push_back(i);
}

void ConductorRole::FlushJournal() {
  if (!journal_ || dirty_.empty()) return;
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  ServeJournalBatch b;
  b.seq = ++journal_seq_;
  b.replay_next = replay_next_;
  b.start_wall_ns = start_wall_.count();
  b.run_dir = journal_run_dir_;
  b.totals = TotalsToCounters(totals_);
  for (size_t i : dirty_) {
    const Pending& p = pending_[i];
    RequestState r;
    r.id = i;
    r.attempt = p.attempt;
    r.redispatches = p.redispatches;
    r.dispatched = p.sent;
    r.kv_arrived = p.kv_arrived;
    r.admitted = p.admitted;
    r.resolved = p.resolved;
    r.prefill = p.decision.prefill;
    r.decode = p.decision.decode;
    r.arrival_model_ns = p.arrival_model.count();
    r.first_token_wall_ns = p.first_token_wall.count();
    r.FromRecord(records_[i]);
    if (p.resolved) r.output_ids = output_ids_[i];
    b.requests.push_back(std::move(r));
  }
  dirty_.clear();
  journal_(b.Encode());
}

void ConductorRole::NoteDecision() {
  if (restored_ && first_decision_at_ == Nanos(0)) first_decision_at_ = ctx_.LocalNow();
}

Nanos ConductorRole::first_decision_at() const { return CopyLocked(mutex_, first_decision_at_); }

void ConductorRole::Restore(const ServeState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  restored_ = true;
  attempt_floor_ = kTakeoverAttempts;
  start_wall_ = Nanos(state.start_wall_ns);
  replay_next_ = std::min<size_t>(state.replay_next, requests_.size());
  TotalsFromCounters(state.totals, &totals_);
  for (const auto& [id, r] : state.requests) {
    if (id >= requests_.size()) continue;
    Pending& p = pending_[id];
    p.attempt = r.attempt;
    p.redispatches = r.redispatches;
    p.dispatched = p.sent = r.dispatched != 0;
    p.kv_arrived = r.kv_arrived != 0;
    p.admitted = r.admitted != 0;
    p.decision.accepted = p.dispatched;
    p.decision.prefill = r.prefill;
    p.decision.decode = r.decode;
    p.arrival_model = Nanos(r.arrival_model_ns);
    p.first_token_wall = Nanos(r.first_token_wall_ns);
    r.ToRecord(&records_[id]);
    if (r.resolved) {
      output_ids_[id] = r.output_ids;
      // Counted (completed, SLO) and logged to requests.csv as when it resolved.
      Resolve(id, records_[id].outcome, records_[id].reject_reason);
    }
  }
  totals_.open_requests = 0;
  for (const Pending& p : pending_) {
    if (p.dispatched && !p.resolved) ++totals_.open_requests;
  }
}

size_t ConductorRole::ResolveInFlight(const std::vector<Rank>& dead) {
  auto dead_index = [&](const std::vector<int>& ranks, int instance) {
    if (instance < 0 || instance >= static_cast<int>(ranks.size())) return false;
    return std::find(dead.begin(), dead.end(), Rank{ranks[instance]}) != dead.end();
  };
  std::vector<std::pair<PrefillTask, int>> tasks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t k = 0; k < prefill_ranks_.size(); ++k) {
      if (dead_index(prefill_ranks_, static_cast<int>(k)))
        scheduler_.MarkPrefillDead(static_cast<int>(k));
    }
    for (size_t k = 0; k < decode_ranks_.size(); ++k) {
      if (dead_index(decode_ranks_, static_cast<int>(k)))
        scheduler_.MarkDecodeDead(static_cast<int>(k));
    }
    for (size_t i = 0; i < replay_next_; ++i) {
      Pending& p = pending_[i];
      if (p.resolved) continue;
      const bool lost_rank = (dead_index(prefill_ranks_, p.decision.prefill) && !p.kv_arrived) ||
                             dead_index(decode_ranks_, p.decision.decode);
      if (p.sent && !lost_rank) continue;  // it finishes: its ranks report here
      // Decided by the old conductor, its task perhaps never sent (or not journaled at all).
      const trace::TraceRequest& t = requests_[i];
      p.arrival_model = std::chrono::milliseconds(t.timestamp_ms);
      p.decision.accepted = true;
      conductor::Request req{t.id, p.arrival_model, t.input_length, t.output_length, t.hash_ids};
      NoteDecision();
      // Admitted at its arrival by the old conductor: served late rather than turned away.
      conductor::Decision d = scheduler_.Decide(req, ModelNow(), /*admission=*/false);
      if (!d.accepted) {
        Resolve(i, trace::Outcome::kFailed,
                std::string("takeover_then_") + conductor::RejectReasonName(d.reason));
        continue;
      }
      records_[i].prefilled = false;
      if (!p.dispatched) ++totals_.open_requests;
      ++totals_.takeover_redispatched;
      tasks.emplace_back(TaskFor(i, d), d.prefill);
    }
  }
  for (const auto& [task, to] : tasks) Dispatch(task, to);
  return tasks.size();
}

}  // namespace mooncake::serve

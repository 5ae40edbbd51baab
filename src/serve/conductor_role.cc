#include "serve/conductor_role.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/log.h"
#include "engine/cost_model.h"

namespace mooncake::serve {

using conductor::RejectReason;

ConductorRole::ConductorRole(ServeContext& ctx, const std::vector<trace::TraceRequest>& requests,
                             conductor::Scheduler& scheduler)
    : ctx_(ctx),
      requests_(requests),
      scheduler_(scheduler),
      prefill_ranks_(ctx.peers.prefill_ranks),
      decode_ranks_(ctx.peers.decode_ranks),
      records_(requests.size()),
      output_ids_(requests.size()),
      pending_(requests.size()) {
  for (size_t i = 0; i < requests.size(); ++i) {
    trace::RequestRecord& r = records_[i];
    const trace::TraceRequest& t = requests[i];
    r.id = RequestId{i};
    r.arrival_s = static_cast<double>(t.timestamp_ms) / 1000.0;
    r.input_tokens = t.input_length;
    r.output_tokens = t.output_length;
    r.blocks = static_cast<int32_t>(t.hash_ids.size());
    r.outcome = trace::Outcome::kLost;
  }
}

Nanos ConductorRole::ModelNow() const {
  Nanos wall = ctx_.ConductorNow() - start_wall_;
  return Nanos(static_cast<int64_t>(static_cast<double>(wall.count()) * ctx_.time_scale()));
}

ConductorRole::Snapshot ConductorRole::TakeSnapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s;
  s.requests = pending_.size();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].resolved) {
      s.resolved.push_back(records_[i]);
    } else if (pending_[i].dispatched) {
      ++s.in_flight;
    }
  }
  const Nanos now = ModelNow();
  const conductor::SchedulerConfig& c = scheduler_.config();
  for (int i = 0; i < c.prefill_instances; ++i) {
    const Nanos left = std::max(Nanos(0), scheduler_.PrefillFreeAt(i) - now);
    s.prefill.push_back({scheduler_.PrefillOutstanding(i), engine::NanosToSeconds(left), 0});
  }
  const conductor::DecodeLoad& d = scheduler_.decode_load();
  for (int i = 0; i < c.decode_instances; ++i) {
    const Nanos tbt = d.PredictTbtNow(i, 0);
    s.decode.push_back({d.ActiveCount(i), engine::NanosToSeconds(tbt), d.ActiveTokens(i)});
  }
  return s;
}

ConductorTotals ConductorRole::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ConductorTotals t = totals_;
  t.scheduler_fetches = scheduler_.fetches();
  t.scheduler_fetched_blocks = scheduler_.fetched_blocks();
  return t;
}

std::vector<uint64_t> ConductorRole::LostRequests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint64_t> lost;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (!pending_[i].resolved) lost.push_back(i);
  }
  return lost;
}

// Caller holds mutex_.
void ConductorRole::Resolve(uint64_t id, trace::Outcome outcome, const std::string& reason) {
  Pending& p = pending_[id];
  if (p.resolved) return;
  p.resolved = true;
  MarkDirty(id);
  if (p.decision.accepted && totals_.open_requests > 0) --totals_.open_requests;
  records_[id].outcome = outcome;
  records_[id].reject_reason = reason;
  ++resolved_;
  if (log_ != nullptr) log_->Append(records_[id]);
  if (outcome == trace::Outcome::kCompleted) {
    ++completed_;
    const auto& th = ctx_.config.thresholds;
    if (records_[id].ttft_s <= th.ttft_s &&
        (th.tbt_s.empty() || records_[id].tbt_s <= th.tbt_s.front())) {
      ++effective_;
    }
  }
  cv_.notify_all();
}

void ConductorRole::Start() {
  transport::CheckRegistered(ctx_.rpc.Register(
      kMsgPrefillDone, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        OnPrefillDone(from, bytes);
      }));
  transport::CheckRegistered(ctx_.rpc.Register(
      kMsgKvArrived,
      [this](Rank from, std::span<const std::byte> bytes, transport::Responder responder) {
        OnKvArrived(from, bytes, std::move(responder));
      }));
  transport::CheckRegistered(ctx_.rpc.Register(
      kMsgDecodeDone, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        OnDecodeDone(from, bytes);
      }));
  transport::CheckRegistered(ctx_.rpc.Register(
      kMsgDecodeTokens, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        OnDecodeTokens(from, bytes);
      }));
}

template <typename Report>
bool ConductorRole::CurrentReport(const Result<Report>& report, Rank from) {
  if (!report.ok() || report->request >= pending_.size()) {
    log::Error("bad {} from rank {}", Report::kWireName, from.value);
    return false;
  }
  return Current(report->request, report->attempt);
}

void ConductorRole::OnPrefillDone(Rank from, std::span<const std::byte> bytes) {
  auto d = PrefillDone::Decode(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!CurrentReport(d, from)) return;
  // Sent again to a standby that took over, which has it already from the journal.
  if (pending_[d->request].resolved || records_[d->request].prefilled) return;
  MarkDirty(d->request);
  FlushOnExit flush{this};
  if (d->failed) {
    // The prefill's engine could not compute it (the rank logged why).
    scheduler_.OnPrefillDone(requests_[d->request].id, pending_[d->request].decision.prefill,
                             ModelNow());
    Resolve(d->request, trace::Outcome::kFailed, "prefill_error");
    return;
  }
  Pending& p = pending_[d->request];
  trace::RequestRecord& r = records_[d->request];
  const trace::TraceRequest& t = RequestAt(d->request);
  const int inst = p.decision.prefill;
  const Nanos now = ModelNow();
  std::span<const BlockHash> ids(t.hash_ids);
  if (p.decision.fetch_from >= 0) {
    // Fetched blocks stay on this instance: hot blocks end up replicated.
    scheduler_.OnBlocksStored(
        inst,
        ids.subspan(p.decision.local_prefix_blocks,
                    p.decision.prefix_blocks - p.decision.local_prefix_blocks),
        now);
  }
  scheduler_.OnBlocksStored(inst, ids.subspan(p.decision.prefix_blocks), now);
  scheduler_.OnPrefillDone(t.id, inst, now);
  p.first_token_wall = Nanos(d->first_token_wall_ns);
  r.prefilled = true;
  r.prefix_blocks_hit = d->blocks_loaded;
  r.prefill_compute_s = d->compute_model_s;
  r.ttft_s = ctx_.WallToModelSeconds(p.first_token_wall - start_wall_) - r.arrival_s;
  totals_.blocks_loaded += d->blocks_loaded;
  totals_.blocks_missing += d->blocks_missing;
  totals_.bytes_loaded += d->bytes_loaded;
  totals_.bytes_stored += d->bytes_stored;
  totals_.bytes_to_decode += d->bytes_to_decode;
  if (p.stream && d->first_token >= 0 && p.streamed.empty()) {
    p.streamed.push_back(d->first_token);  // the client's first token, at once
    cv_.notify_all();
  }
  if (t.output_length <= 1) {  // the first token was the last: no decode
    if (d->first_token >= 0) output_ids_[d->request] = {d->first_token};
    r.e2e_s = r.ttft_s;
    scheduler_.OnDecodeDone(t.id, p.decision.decode, now);
    Resolve(d->request, trace::Outcome::kCompleted, "");
  }
}

void ConductorRole::OnKvArrived(Rank from, std::span<const std::byte> bytes,
                                transport::Responder responder) {
  // Answered with the lock released: a handler never holds a lock while it sends
  // (docs/RELIABILITY.md), since the send may run UCX's progress and with it other handlers.
  const Result<KvArrivedReply> reply = AdmitArrived(from, KvArrived::Decode(bytes));
  if (reply.ok()) {
    responder.Reply(reply->Encode());
  } else {
    responder.Fail(reply.status());
  }
}

Result<KvArrivedReply> ConductorRole::AdmitArrived(Rank from, const Result<KvArrived>& a) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!a.ok() || a->request >= pending_.size()) {
    return ProtocolError("bad KvArrived from rank " + std::to_string(from.value));
  }
  KvArrivedReply reply;  // admitted = 0
  if (!Current(a->request, a->attempt)) return reply;
  Pending& p = pending_[a->request];
  if (p.kv_arrived) {
    // Asked again (the decode rank got no answer from a conductor that died since, or its call
    // timed out): the same answer, counted once.
    reply.admitted = p.admitted && !p.resolved ? 1 : 0;
    return reply;
  }
  totals_.blocks_verified += a->blocks_verified;
  totals_.blocks_corrupt += a->blocks_corrupt;
  p.kv_arrived = true;
  MarkDirty(a->request);
  // A re-dispatched request was admitted at its arrival: it joins without a second check, as
  // docs/FAULTS.md says, so a fault never shows up as a rejection.
  RejectReason reason =
      a->blocks_corrupt > 0
          ? RejectReason::kDecodeOverload
          : scheduler_.AdmitToDecode(RequestAt(a->request).id, p.decision.decode, ModelNow(),
                                     /*admission=*/p.redispatches == 0);
  reply.admitted = reason == RejectReason::kNone ? 1 : 0;
  p.admitted = reply.admitted != 0;
  if (a->blocks_corrupt > 0) {
    Resolve(a->request, trace::Outcome::kLost, "kv_checksum");
  } else if (reason != RejectReason::kNone) {
    Resolve(a->request, trace::Outcome::kRejected, conductor::RejectReasonName(reason));
  }
  FlushJournal();
  return reply;
}

void ConductorRole::OnDecodeDone(Rank from, std::span<const std::byte> bytes) {
  auto d = DecodeDone::Decode(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!CurrentReport(d, from)) return;
  Pending& p = pending_[d->request];
  if (p.resolved) return;  // sent again to a standby that took over
  FlushOnExit flush{this};
  trace::RequestRecord& r = records_[d->request];
  scheduler_.OnDecodeDone(RequestAt(d->request).id, p.decision.decode, ModelNow());
  r.tbt_s = d->tbt_model_s;
  output_ids_[d->request] = std::move(d->output_ids);
  r.e2e_s = ctx_.WallToModelSeconds(Nanos(d->done_wall_ns) - start_wall_) - r.arrival_s;
  Resolve(d->request, trace::Outcome::kCompleted, "");
}

// Handlers run one at a time in arrival order (transport/rpc.h), and a decode rank reports a
// request's tokens in order: each entry continues what the conductor has. A stale attempt's,
// a resolved request's, or one that would leave a gap is dropped (DecodeDone brings them all).
void ConductorRole::OnDecodeTokens(Rank from, std::span<const std::byte> bytes) {
  auto d = DecodeTokens::Decode(bytes);
  if (!d.ok()) {
    log::Error("bad DecodeTokens from rank {}: {}", from.value, d.status().ToString());
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  size_t next = 0;
  for (size_t i = 0; i < d->requests.size(); ++i) {
    const size_t first = next;
    next += d->counts[i];
    const uint64_t id = d->requests[i];
    if (id >= pending_.size() || !Current(id, d->attempts[i])) continue;
    Pending& p = pending_[id];
    if (!p.stream || p.resolved || d->offsets[i] > p.streamed.size()) continue;
    // Tokens the conductor has already (a re-dispatched request's second attempt) are skipped.
    const size_t have = p.streamed.size() - d->offsets[i];
    if (have < d->counts[i]) {
      p.streamed.insert(p.streamed.end(), d->tokens.begin() + first + have,
                        d->tokens.begin() + next);
    }
  }
  cv_.notify_all();
}

// Wall seconds left: the replay's remaining arrivals, or the requests still open at the rate
// so far, whichever is longer (a drain after the last arrival shows in the second); < 0 when
// nothing is resolved yet to measure a rate by.
double ConductorRole::WallSecondsLeft(Nanos wall_elapsed) const {
  const double secs = static_cast<double>(wall_elapsed.count()) / 1e9;
  if (requests_.empty() || resolved_ == 0 || secs <= 0) return -1;
  const auto last = std::max_element(
      requests_.begin(), requests_.end(),
      [](const auto& a, const auto& b) { return a.timestamp_ms < b.timestamp_ms; });
  const Nanos last_arrival = std::chrono::milliseconds(last->timestamp_ms);
  const double replay_left =
      static_cast<double>((ctx_.ModelToWall(last_arrival) - wall_elapsed).count()) / 1e9;
  const double rate = static_cast<double>(resolved_) / secs;
  const double open_left = static_cast<double>(pending_.size() - resolved_) / rate;
  return std::max({replay_left, open_left, 0.0});
}

void ConductorRole::PrintProgress(Nanos wall_elapsed) {
  double secs = static_cast<double>(wall_elapsed.count()) / 1e9;
  double attainment = completed_ ? 100.0 * static_cast<double>(effective_) / completed_ : 0.0;
  const double left = WallSecondsLeft(wall_elapsed);
  const std::string left_text =
      left < 0 ? "time left unknown" : fmt::format("about {:.0f} s left", std::ceil(left));
  std::printf(
      "progress: %llu/%zu requests done (%llu completed), %.1f req/s wall, SLO met by "
      "%.1f%% of completed, model time %.1f s, %s\n",
      static_cast<unsigned long long>(resolved_), pending_.size(),
      static_cast<unsigned long long>(completed_),
      secs > 0 ? static_cast<double>(resolved_) / secs : 0.0, attainment,
      engine::NanosToSeconds(ModelNow()), left_text.c_str());
  std::fflush(stdout);
}

void ConductorRole::Run() {
  // A standby that took over goes on with the active's replay (Restore), on its clock.
  if (!restored_) start_wall_ = ctx_.ConductorNow() + Nanos(50'000'000);  // request 0 on time
  next_progress_ = std::max(start_wall_, ctx_.ConductorNow()) + ctx_.config.progress_interval;
  // Requests still open at the job deadline stay "lost", those arriving after it too: the
  // replay stops there rather than dispatching the rest of the trace first.
  const Nanos deadline = start_wall_ + ctx_.config.job_deadline;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TakePartialSummary();  // from the start: a job killed early still leaves one
    accepting_ = !stop_requested_;
    cv_.notify_all();  // a Submit that came before the replay began
  }
  WritePartialSummary();
  size_t first = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = replay_next_;
  }
  for (size_t i = first; i < requests_.size(); ++i) {
    const Nanos arrival_model = std::chrono::milliseconds(requests_[i].timestamp_ms);
    const Nanos due = start_wall_ + ctx_.ModelToWall(arrival_model);
    if (due >= deadline) break;
    {
      // Sleeps until the arrival, woken early by a stop.
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait_until(lock, std::chrono::steady_clock::now() + (due - ctx_.ConductorNow()),
                     [&] { return stop_requested_; });
      if (stop_requested_) break;
    }
    SleepUntil(ctx_.ToLocal(due));
    std::optional<PrefillTask> task = Decide(i, arrival_model);
    WritePartialSummary();  // when one came due
    if (task) {
      int prefill = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        prefill = pending_[i].decision.prefill;
      }
      Dispatch(*task, prefill);
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // Serving: the replay's requests still open, or (serve until stopped) no stop asked for yet.
  while (ctx_.ConductorNow() < deadline && !stop_requested_ &&
         (until_stopped_ || resolved_ < requests_.size())) {
    WaitAndReportProgress(lock);
  }
  // Draining: nothing new is taken; what was admitted is waited for.
  accepting_ = false;
  serving_over_ = true;
  const Nanos drain_end = stop_requested_ || until_stopped_
                              ? std::min(deadline, ctx_.ConductorNow() + drain_)
                              : deadline;
  while (Open() && ctx_.ConductorNow() < drain_end) {
    WaitAndReportProgress(lock);
  }
  run_over_ = true;  // what is still open is lost: its waiting clients are answered now
  cv_.notify_all();
}

// Caller holds mutex_. A request dispatched and not resolved, or a replayed one not yet
// resolved (without a stop, the replay's requests are all waited for).
bool ConductorRole::Open() const {
  if (!stop_requested_ && resolved_ < requests_.size() && !until_stopped_) return true;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].dispatched && !pending_[i].resolved) return true;
  }
  return false;
}

void ConductorRole::RequestStop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_requested_ = true;
  accepting_ = false;
  cv_.notify_all();
}

const trace::TraceRequest& ConductorRole::RequestAt(size_t i) const {
  return i < requests_.size() ? requests_[i] : online_[i - requests_.size()];
}

void ConductorRole::WaitAndReportProgress(std::unique_lock<std::mutex>& lock) {
  cv_.wait_for(lock, std::chrono::milliseconds(100));
  MaybePrintProgress();
  lock.unlock();
  WritePartialSummary();
  lock.lock();
}

// Caller holds mutex_.
void ConductorRole::MaybePrintProgress() {
  if (ctx_.ConductorNow() < next_progress_) return;
  PrintProgress(ctx_.ConductorNow() - start_wall_);
  TakePartialSummary();
  next_progress_ += ctx_.config.progress_interval;
}

std::optional<PrefillTask> ConductorRole::Decide(size_t i, Nanos arrival_model) {
  std::lock_guard<std::mutex> lock(mutex_);
  return DecideLocked(i, arrival_model);
}

std::optional<PrefillTask> ConductorRole::DecideLocked(size_t i, Nanos arrival_model) {
  const trace::TraceRequest& t = RequestAt(i);
  MaybePrintProgress();
  NoteDecision();
  if (i < requests_.size()) replay_next_ = std::max(replay_next_, i + 1);
  MarkDirty(i);
  FlushOnExit flush{this};
  pending_[i].arrival_model = arrival_model;
  conductor::Request req{t.id, arrival_model, t.input_length, t.output_length, t.hash_ids};
  // Decide at the request's arrival in model time, as the simulator does.
  conductor::Decision d = scheduler_.Decide(req, arrival_model);
  records_[i].inflight_miss_blocks = d.inflight_miss_blocks;
  if (!d.accepted) {
    pending_[i].decision = d;
    Resolve(i, trace::Outcome::kRejected, conductor::RejectReasonName(d.reason));
    return std::nullopt;
  }
  records_[i].ttft_predicted_s = engine::NanosToSeconds(d.predicted_ttft);
  log::Debug(
      "request {} -> prefill {} decode {}: predicted ttft {:.3f} s (queue {:.3f}, "
      "prefill {:.3f}, transfer {:.3f}), prefix {}/{} blocks",
      i, d.prefill, d.decode, engine::NanosToSeconds(d.predicted_ttft),
      engine::NanosToSeconds(d.t_queue), engine::NanosToSeconds(d.t_prefill),
      engine::NanosToSeconds(d.t_transfer), d.prefix_blocks, t.hash_ids.size());
  ++totals_.open_requests;
  totals_.open_requests_high_water =
      std::max(totals_.open_requests_high_water, totals_.open_requests);
  return TaskFor(i, d);
}

PrefillTask ConductorRole::TaskFor(size_t i, const conductor::Decision& d) {
  const trace::TraceRequest& t = RequestAt(i);
  Pending& p = pending_[i];
  if (p.attempt < attempt_floor_) p.attempt += attempt_floor_;
  p.decision = d;
  p.dispatched = true;
  p.sent = false;
  p.kv_arrived = false;
  p.admitted = false;
  MarkDirty(i);
  records_[i].prefill_instance = d.prefill;
  records_[i].decode_instance = d.decode;
  PrefillTask task;
  task.request = i;
  task.attempt = p.attempt;
  task.input_length = t.input_length;
  task.output_length = t.output_length;
  task.decode_rank = decode_ranks_[d.decode];
  task.local_prefix_blocks = d.local_prefix_blocks;
  task.prefix_blocks = d.prefix_blocks;
  task.prefix_tokens = d.prefix_tokens;
  task.t_transfer_ns = d.t_transfer.count();
  task.arrival_wall_ns = (start_wall_ + ctx_.ModelToWall(p.arrival_model)).count();
  for (BlockHash h : t.hash_ids) task.hash_ids.push_back(h.value);
  task.prompt_ids = t.prompt_ids;
  task.stream = p.stream ? 1 : 0;
  return task;
}

bool ConductorRole::Current(uint64_t id, uint32_t attempt) {
  if (pending_[id].attempt == attempt) return true;
  ++totals_.stale_reports;
  return false;
}

void ConductorRole::OnRankDead(Rank rank, const std::string& why) {
  auto index_of = [&](const std::vector<int>& ranks) {
    auto it = std::find(ranks.begin(), ranks.end(), rank.value);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
  };
  const int prefill = index_of(prefill_ranks_), decode = index_of(decode_ranks_);
  if (prefill < 0 && decode < 0) return;
  const std::string reason = std::string(prefill >= 0 ? "prefill" : "decode") + "_rank_" +
                             std::to_string(rank.value) + "_lost";
  std::vector<std::pair<PrefillTask, int>> tasks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    FlushOnExit flush{this};
    if (prefill >= 0) scheduler_.MarkPrefillDead(prefill);
    if (decode >= 0) scheduler_.MarkDecodeDead(decode);
    for (size_t i = 0; i < pending_.size(); ++i) {
      const Pending& p = pending_[i];
      if (p.resolved || !p.dispatched) continue;
      const bool held = (prefill >= 0 && p.decision.prefill == prefill && !p.kv_arrived) ||
                        (decode >= 0 && p.decision.decode == decode);
      if (!held) continue;
      if (auto task = Redispatch(i, reason))
        tasks.emplace_back(*task, pending_[i].decision.prefill);
    }
  }
  log::Warn("rank {} ({}) lost: {}; {} requests re-dispatched", rank.value,
            prefill >= 0 ? "prefill" : "decode", why, tasks.size());
  for (const auto& [task, to] : tasks) Dispatch(task, to);
}

void ConductorRole::OnBlocksLost(std::span<const BlockHash> blocks) {
  std::lock_guard<std::mutex> lock(mutex_);
  scheduler_.ForgetBlocks(blocks);
}

std::optional<PrefillTask> ConductorRole::Redispatch(size_t i, const std::string& reason) {
  Pending& p = pending_[i];
  const trace::TraceRequest& t = RequestAt(i);
  scheduler_.Abandon(t.id);
  if (p.redispatches >= 1) {
    Resolve(i, trace::Outcome::kFailed, reason + "_twice");
    return std::nullopt;
  }
  ++p.redispatches;
  ++p.attempt;
  NoteDecision();
  records_[i].prefilled = false;
  conductor::Request req{t.id, p.arrival_model, t.input_length, t.output_length, t.hash_ids};
  // Admitted already at its arrival: served late rather than turned away now.
  conductor::Decision d = scheduler_.Decide(req, ModelNow(), /*admission=*/false);
  if (!d.accepted) {
    Resolve(i, trace::Outcome::kFailed, reason + "_then_" + conductor::RejectReasonName(d.reason));
    return std::nullopt;
  }
  ++totals_.redispatched;
  return TaskFor(i, d);
}

void ConductorRole::TakePartialSummary() {
  if (partial_dir_.empty()) return;
  trace::Summary s = trace::Summarize(records_, ctx_.config.thresholds);
  s.extra["partial"] = 1;  // written while the job ran: the final summary replaces it
  partial_json_ = trace::SummaryJson(s);
}

void ConductorRole::WritePartialSummary() {
  std::string json;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    json.swap(partial_json_);
  }
  if (json.empty()) return;
  Status st = trace::WriteTextFile(partial_dir_ + "/summary.json", json);
  if (!st.ok()) log::Warn("{}", st.ToString());
}

void ConductorRole::Dispatch(const PrefillTask& task, int prefill) {
  const Rank to{prefill_ranks_[prefill]};
  Status s = ctx_.rpc.Notify(to, kMsgPrefillTask, task.Encode());
  if (s.ok()) {
    // Journaled only now: a standby that takes over knows the task reached its rank.
    std::lock_guard<std::mutex> lock(mutex_);
    Pending& p = pending_[task.request];
    if (p.attempt == task.attempt) {
      p.sent = true;
      MarkDirty(task.request);
      FlushJournal();
    }
    return;
  }
  log::Error("request {}: dispatch to prefill rank {} failed: {}", task.request, to.value,
             s.ToString());
  std::lock_guard<std::mutex> lock(mutex_);
  ++totals_.dispatch_failures;
}

}  // namespace mooncake::serve

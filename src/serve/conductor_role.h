// The conductor rank's serving loop: replays the requests at their arrival times (trace
// timestamps / time_scale), asks the Scheduler (the same object the simulator drives) for a
// prefill and a decode instance or a rejection, dispatches PrefillTasks, and turns the ranks'
// reports (PrefillDone, KvArrived, DecodeDone) into the scheduler's notifications and into one
// RequestRecord per request. Every request ends completed, rejected (by reason) or lost (not
// finished by the job deadline), never silently dropped.
//
// Online requests (HTTP completions, serve_http.h) are one more source: Submit decides them at
// once through the same scheduler (admission, Algorithm 1, early rejection) and numbers them
// after the workload's requests; Await waits for one to resolve, AwaitTokens (a streamed one)
// for its next tokens.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "conductor/scheduler.h"
#include "serve/messages.h"
#include "serve/serve_context.h"
#include "serve/serve_standby.h"
#include "trace/metrics.h"
#include "trace/run_report.h"
#include "trace/trace_request.h"

namespace mooncake::serve {

struct ConductorTotals {
  uint64_t blocks_verified = 0, blocks_corrupt = 0;
  uint64_t blocks_loaded = 0, blocks_missing = 0;
  uint64_t bytes_loaded = 0, bytes_stored = 0, bytes_to_decode = 0;
  uint64_t dispatch_failures = 0;
  uint64_t redispatched = 0;  // requests re-dispatched after their prefill or decode rank died
  uint64_t takeover_redispatched = 0;  // re-dispatched by a standby that took over
  uint64_t stale_reports = 0;          // reports of an attempt that was superseded (ignored)
  // kvcache_centric: prefixes fetched from another instance's cache, and their blocks (the
  // scheduler's counts, as in the simulator's summary).
  uint64_t scheduler_fetches = 0, scheduler_fetched_blocks = 0;
  // Admitted requests not yet resolved: now, and the most at once (benchmarks/overload.sh).
  uint64_t open_requests = 0, open_requests_high_water = 0;
};

class ConductorRole {
 public:
  ConductorRole(ServeContext& ctx, const std::vector<trace::TraceRequest>& requests,
                conductor::Scheduler& scheduler);
  void Start();  // registers the report handlers
  // Streams each request's row to `log` as it resolves (null: none). Call before Run.
  void SetRequestLog(trace::RequestLog* log) { log_ = log; }
  // A standby conductor follows this one (docs/FAULTS.md): every change of a request's state,
  // with the replay position, the replay's start, `run_dir` and the totals, goes to `send` as
  // one encoded ServeJournalBatch (serve_journal.h), under the role's lock and in order.
  // Workload requests only (online ones are not followed). Call before Run.
  void SetJournal(std::function<void(std::vector<std::byte>)> send, std::string run_dir) {
    journal_ = std::move(send);
    journal_run_dir_ = std::move(run_dir);
  }
  // A standby that took over: the state the active journaled (its records, decisions, replay
  // position and start, totals). Resolved requests are logged again (SetRequestLog first); Run
  // goes on with the replay where the active left it. Call before Start.
  void Restore(const ServeState& state);
  // After Restore, with the ranks the membership names dead: requests the old conductor decided
  // and whose task it had not sent yet (as journaled), and those held by a dead rank, are
  // dispatched again; the others finish, their ranks reporting here. Every dispatch from now on
  // carries an attempt number the old conductor never used, so a report of its unjournaled
  // dispatches is stale (ignored) and nothing is counted twice. Returns how many were
  // re-dispatched.
  size_t ResolveInFlight(const std::vector<Rank>& dead);
  // After Restore: when this conductor made its first decision (local steady clock; 0: none).
  Nanos first_decision_at() const;
  // Writes summary.json (marked partial) into `run_dir` at every progress line, so a job that
  // ends abnormally keeps a summary of what it measured. Empty: never. Call before Run.
  void SetPartialSummaryDir(std::string run_dir) { partial_dir_ = std::move(run_dir); }
  // A rank was declared dead: its instance is never chosen again, and the requests it held are
  // re-dispatched (a dead prefill: those not yet at their decode rank; a dead decode: those not
  // finished) at most once, else they end `failed` with the reason. Any thread.
  void OnRankDead(Rank rank, const std::string& why);
  // The store lost every replica of these blocks (a store rank died): they leave the index.
  void OnBlocksLost(std::span<const BlockHash> blocks);
  // Replays the requests at their arrival times and waits until each is resolved or the job
  // deadline passes; a request arriving after the deadline is not dispatched (it is lost).
  // With ServeUntilStopped, it then keeps serving online requests until RequestStop. Once the
  // replay is over or a stop is asked for, no online request is taken; those in flight are
  // waited for up to `drain` (and the job deadline).
  void Run();
  // Call before Run.
  void ServeUntilStopped(bool on, Nanos drain) {
    until_stopped_ = on;
    drain_ = drain;
  }
  // Ends the replay (requests not yet dispatched stay lost) and the serving; any thread.
  void RequestStop();
  // A client's request: its prompt tokens, the tokens to generate, and the block hash ids of
  // its prompt (completions.h). `stream`: its tokens are collected as they are generated (the
  // prefill's first, then the decode rank's DecodeTokens), for AwaitTokens. The id, or kBusy
  // while the job is not taking requests.
  Result<uint64_t> Submit(std::vector<int32_t> prompt_ids, int32_t max_tokens,
                          std::vector<BlockHash> hash_ids, bool stream = false);
  struct OnlineResult {
    bool resolved = false;  // false: still open when the wait ended
    trace::RequestRecord record;
    std::vector<int32_t> output_ids;
  };
  // Waits for request `id` (from Submit) to resolve, at most `timeout`; any thread. Once Run
  // has returned, a request still open counts as resolved, lost.
  OnlineResult Await(uint64_t id, Nanos timeout);
  // Waits, at most `timeout`, until streamed request `id` has more than `have` tokens or is
  // resolved; any thread. `output_ids` holds its tokens from position `have` on: those
  // generated so far, or once resolved all of them (a re-dispatched request generates the same
  // greedy tokens again, so what was handed out stays a prefix). `record` is set once resolved.
  OnlineResult AwaitTokens(uint64_t id, size_t have, Nanos timeout);
  // Every request, the workload's and then the online ones, by id; read after Run.
  std::vector<trace::TraceRequest> AllRequests() const;
  const std::vector<trace::RequestRecord>& records() const { return records_; }
  // Each request's generated tokens (an engine that computes them; else every list is empty),
  // by request id; read after Run.
  const std::vector<std::vector<int32_t>>& output_ids() const { return output_ids_; }
  Nanos start_wall() const { return start_wall_; }  // local clock at model time 0
  ConductorTotals totals() const;
  // Ids of the requests that never finished.
  std::vector<uint64_t> LostRequests() const;
  // A consistent copy for a scrape (any thread): the records of the requests resolved so far,
  // how many were dispatched and not yet resolved, and the trace's size.
  // One instance's load as the scheduler sees it (model clock).
  struct InstanceLoad {
    int requests = 0;           // prefill: queued or running; decode: in the batch
    double predicted_s = 0;     // prefill: until its queue drains; decode: next step's TBT
    int64_t decode_tokens = 0;  // decode: context tokens of the batch
  };
  struct Snapshot {
    std::vector<trace::RequestRecord> resolved;
    uint64_t in_flight = 0;
    uint64_t requests = 0;
    std::vector<InstanceLoad> prefill, decode;  // by instance index
  };
  Snapshot TakeSnapshot() const;

 private:
  struct Pending {
    conductor::Decision decision;
    Nanos first_token_wall{0};
    Nanos arrival_model{0};
    uint32_t attempt = 0;
    uint32_t redispatches = 0;  // after a rank died (at most once); a takeover's do not count
    bool dispatched = false;
    // The current attempt's task left for its prefill rank (journaled as `dispatched`: a standby
    // that takes over lets such a request finish, and decides again one that was not sent).
    bool sent = false;
    bool kv_arrived = false;
    bool admitted = false;  // the decode rank's join was admitted (asked again: same answer)
    bool resolved = false;
    bool stream = false;            // an online request whose client streams
    std::vector<int32_t> streamed;  // its tokens generated so far (stream only)
  };
  // Report handlers (RPC threads).
  void OnPrefillDone(Rank from, std::span<const std::byte> bytes);
  void OnKvArrived(Rank from, std::span<const std::byte> bytes, transport::Responder responder);
  // OnKvArrived's answer, taken under mutex_ (sent after it is released).
  Result<KvArrivedReply> AdmitArrived(Rank from, const Result<KvArrived>& arrived);
  void OnDecodeDone(Rank from, std::span<const std::byte> bytes);
  void OnDecodeTokens(Rank from, std::span<const std::byte> bytes);
  void Resolve(uint64_t id, trace::Outcome outcome, const std::string& reason);
  Nanos ModelNow() const;                            // model time since the replay started
  double WallSecondsLeft(Nanos wall_elapsed) const;  // caller holds mutex_
  void PrintProgress(Nanos wall_elapsed);
  void MaybePrintProgress();  // caller holds mutex_
  // Run's serving and draining loops: waits up to 100 ms under `lock` (on mutex_), prints a
  // progress line when one is due and writes its partial summary with the lock released.
  void WaitAndReportProgress(std::unique_lock<std::mutex>& lock);
  const trace::TraceRequest& RequestAt(size_t i) const;    // caller holds mutex_ (online ones)
  size_t RequestCount() const { return pending_.size(); }  // caller holds mutex_
  bool Open() const;                                       // caller holds mutex_
  // Asks the scheduler about request i at its arrival: the task for the chosen prefill
  // instance, or nothing when the request was rejected (resolved here).
  std::optional<PrefillTask> Decide(size_t i, Nanos arrival_model);
  std::optional<PrefillTask> DecideLocked(size_t i, Nanos arrival_model);  // holds mutex_
  // Caller holds mutex_. The task of request i for decision `d` (recorded as its current one).
  PrefillTask TaskFor(size_t i, const conductor::Decision& d);
  // Caller holds mutex_. Re-decides request i once, after the rank that held it died.
  std::optional<PrefillTask> Redispatch(size_t i, const std::string& reason);
  // Caller holds mutex_. A report of request `id` attempt `attempt`: false when stale.
  bool Current(uint64_t id, uint32_t attempt);
  // Caller holds mutex_. A decoded PrefillDone or DecodeDone from `from` about a known request's
  // current attempt; false when stale, or when malformed or unknown (logged).
  template <typename Report>
  bool CurrentReport(const Result<Report>& report, Rank from);
  // Caller holds mutex_. summary.json as it stands, kept for WritePartialSummary.
  void TakePartialSummary();
  // Caller does not hold mutex_: the kept summary to the run folder, written outside the lock
  // so that a slow disk stalls no handler (decode ranks' KvArrived calls wait on that lock).
  // Only the replay's thread (Run) writes.
  void WritePartialSummary();
  // Caller holds mutex_. Request i changed: the next FlushJournal sends it.
  void MarkDirty(size_t i);
  // Caller holds mutex_. The changed requests to the standby (no-op without one).
  void FlushJournal();
  // Caller holds mutex_. Sends what changed when the scope ends (before the lock is released).
  struct FlushOnExit {
    ConductorRole* role;
    ~FlushOnExit() { role->FlushJournal(); }
  };
  // Caller holds mutex_. After Restore: the first decision's time is noted.
  void NoteDecision();
  void Dispatch(const PrefillTask& task, int prefill);

  ServeContext& ctx_;
  const std::vector<trace::TraceRequest>& requests_;  // the workload's (fixed)
  bool until_stopped_ = false;
  Nanos drain_{0};
  conductor::Scheduler& scheduler_;
  std::vector<int> prefill_ranks_, decode_ranks_;

  mutable std::mutex mutex_;  // guards everything below and the scheduler
  std::condition_variable cv_;
  std::vector<trace::RequestRecord> records_;
  std::vector<std::vector<int32_t>> output_ids_;
  std::vector<Pending> pending_;
  std::vector<trace::TraceRequest> online_;  // request requests_.size() + k is online_[k]
  bool accepting_ = false;                   // Submit takes requests
  bool stop_requested_ = false;
  bool serving_over_ = false;  // Run is draining or done
  bool run_over_ = false;      // Run returned: a request still open is lost (Await returns)
  uint64_t resolved_ = 0, completed_ = 0, effective_ = 0;
  ConductorTotals totals_;
  Nanos start_wall_{0};  // conductor clock at model time 0
  Nanos next_progress_{0};
  trace::RequestLog* log_ = nullptr;
  std::string partial_dir_;
  std::string partial_json_;  // taken at a progress line, not written yet (under mutex_)
  // The standby's journal (SetJournal) and the takeover (Restore), guarded by mutex_.
  std::function<void(std::vector<std::byte>)> journal_;
  std::string journal_run_dir_;
  std::vector<uint64_t> dirty_;
  uint64_t journal_seq_ = 0;
  size_t replay_next_ = 0;  // trace requests [0, replay_next_) were decided
  bool restored_ = false;
  // After a takeover, every attempt number is at least this (the old conductor's are below).
  uint32_t attempt_floor_ = 0;
  Nanos first_decision_at_{0};
};

}  // namespace mooncake::serve
